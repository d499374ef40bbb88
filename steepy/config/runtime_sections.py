"""The `runtimes.<name>' sections of the configuration, read without knowing the runtimes.

Each section is kept with the places of its keys until the settings class of its runtime is
known (a runtime of steepy's, of an installed package or of steepy.yaml's `plugins' declares
one, see `steepy.runtimes.RuntimeSettings'), then checked against that class like every other
key: a bad value, a missing one or an unknown key is a Problem at its file:line:column, and a
variable STEEPY_RUNTIMES_<NAME>_<KEY> overrides the file. No runtime is known here by name.
"""

from __future__ import annotations

import difflib
from dataclasses import replace
from typing import Any, Mapping, TypeVar

from pydantic import ValidationError

from steepy.config.located import Origin, environment, nest, problem_of
from steepy.config.model import ENV_PREFIXES, LEAVES, Section, _leaves
from steepy.errors import InputError, Problem
from steepy.model.common import type_name as _kind

S = TypeVar("S", bound=Section)
PREFIX = "runtimes."


class RuntimeSections:
    def __init__(self, values: dict[str, dict[str, Any]], places: dict[str, Problem],
                 origins: dict[str, Origin], variables: dict[str, str], fallback: str) -> None:
        self._values = values  # runtime -> full key (`runtimes.slurm.partition') -> value
        self._places = places  # runtime -> where its section starts
        self._origins = origins
        self._variables = variables  # the STEEPY_RUNTIMES_* / STEEP_RUNTIMES_* ones
        self._fallback = fallback  # the file a problem without a place names

    @classmethod
    def taken_from(cls, raw: dict, origins: dict[str, Origin], environ: Mapping[str, str],
                   fallback: str, problems: list[Problem]) -> "RuntimeSections":
        """Every `runtimes.<name>.*' key taken out of the flat keys `raw'; a section that is
        no object is a problem."""
        values: dict[str, dict[str, Any]] = {}
        places: dict[str, Problem] = {}
        for key in [k for k in raw if k.startswith(PREFIX) and k not in LEAVES]:
            name, _, rest = key[len(PREFIX):].partition(".")
            value = raw.pop(key)
            places.setdefault(name, origins[key].problem("", key))
            section = values.setdefault(name, {})
            if rest:
                section[key] = value
            elif value not in (None, {}):  # `runtimes.tiny: 5'
                problems.append(origins[key].problem(
                    f"expected an object with the settings of runtime `{name}', got "
                    f"{_kind(value)}", key))
        starts = tuple(prefix + PREFIX.upper().rstrip(".") + "_" for prefix in ENV_PREFIXES)
        variables = {k: v for k, v in environ.items() if k.startswith(starts)}
        kept = {k: o for k, o in origins.items() if k.startswith(PREFIX) and k not in LEAVES}
        return cls(values, places, kept, variables, fallback)

    def names(self) -> list[str]:
        """The runtimes that have a section."""
        return list(self._values)

    def settings(self, name: str, model: type[S]) -> S:
        """The section of runtime `name' checked against `model' (its fields' aliases are
        the keys); InputError with every problem located."""
        prefix = f"{PREFIX}{name}."
        raw = dict(self._values.get(name, {}))
        origins = dict(self._origins)
        environment(self._variables, raw, origins,
                    {prefix + key: text for key, text in _leaves(model).items()})
        known = [info.alias or field for field, info in model.model_fields.items()]
        problems: list[Problem] = []
        for key in list(raw):
            top = key[len(prefix):].split(".", 1)[0]
            if top not in known:
                del raw[key]
                close = difflib.get_close_matches(top, known, n=1)
                hint = f"; did you mean {close[0]}?" if close else ""
                problems.append(origins[key].problem(
                    f"runtime `{name}' has no setting `{top}'{hint} (its settings: "
                    f"{', '.join(known) or 'none'})", key))
        try:
            checked = model.model_validate(nest({k[len(prefix):]: v for k, v in raw.items()}))
        except ValidationError as e:
            problems += [self._placed(problem_of(error, origins, self._fallback, model, prefix),
                                      name) for error in e.errors()]
        if problems:
            raise InputError(problems)
        return checked

    def _placed(self, problem: Problem, name: str) -> Problem:
        """A problem of a value nobody gave (a required one) at the runtime's section."""
        place = self._places.get(name)
        if problem.line is not None or place is None:
            return problem
        return replace(problem, file=place.file, line=place.line, column=place.column)

    def unused(self, runtimes: list[str]) -> list[Problem]:
        """Warnings for the sections of runtimes none of `runtimes' is."""
        out = []
        for name, place in self._places.items():
            if name not in runtimes:
                close = difflib.get_close_matches(name, runtimes, n=1)
                hint = f" (did you mean {close[0]}?)" if close else ""
                out.append(replace(place, message=f"no runtime `{name}' is loaded{hint}; its "
                                                  "settings are ignored"))
        return out
