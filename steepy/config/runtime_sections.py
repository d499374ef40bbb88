"""The `runtimes.<name>' sections of the configuration, read without knowing the runtimes.

Each section is kept with the places of its keys until the settings class of its runtime is
known (a runtime of steepy's, of an installed package or of steepy.yaml's `plugins' declares
one, see `steepy.runtimes.RuntimeSettings'), then checked against that class like every other
key: a bad value, a missing one or an unknown key is a Problem at its file:line:column, and a
variable STEEPY_RUNTIMES_<NAME>_<KEY> overrides the file. A dotted key is split only along
the class's own keys, so a key below a setting keeps its dots (the capability `cuda11.8' of
`runtimes.slurm.capabilities'). No runtime is known here by name.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping, TypeVar

from pydantic import ValidationError

from steepy.config.located import ENV_PREFIXES, Origin, environment, nest
from steepy.config.problems import problem_of
from steepy.config.model import LEAVES
from steepy.config.section import Section, _attribute_names, _leaves
from steepy.errors import InputError, Problem
from steepy.model.common import type_name as _kind
from steepy.model.suggestions import closest

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
        problems: list[Problem] = []
        environment(self._variables, raw, origins,
                    {prefix + key: text for key, text in _leaves(model).items()}, problems)
        known = [info.alias or field for field, info in model.model_fields.items()]
        placed: dict[tuple[str, ...], str] = {}  # where each value goes -> its key
        for key in raw:
            where = _along(model, _written(origins.get(key), key, prefix))
            other = next((k for p, k in placed.items() if where[:len(p)] == p[:len(where)]), None)
            if where[0] not in known:
                close = closest(where[0], known)
                hint = f"; did you mean {close}?" if close else ""
                problems.append(origins[key].problem(
                    f"runtime `{name}' has no setting `{where[0]}'{hint} (its settings: "
                    f"{', '.join(known) or 'none'})", key))
            elif other is not None:  # `capabilities: {}' and `capabilities.gpu: [...]'
                first = origins[other].problem("", other).location()
                problems.append(origins[key].problem(f"set a second time (first at {first})", key))
            else:
                placed[where] = key
        try:
            checked = model.model_validate(nest({w: raw[k] for w, k in placed.items()}))
        except ValidationError as e:
            problems += [self._placed(problem_of(error, origins, self._fallback, model, prefix),
                                      name) for error in e.errors()]
        if problems:
            raise InputError(problems)
        return checked

    def _placed(self, problem: Problem, name: str) -> Problem:
        """A problem of a value nobody gave (a required one) at the runtime's section."""
        place = self._places.get(name)
        if problem.line is not None or problem.file != self._fallback or place is None:
            return problem  # placed already, or a variable's
        return replace(problem, file=place.file, line=place.line, column=place.column)

    def unused(self, runtimes: list[str]) -> list[Problem]:
        """Warnings for the sections of runtimes none of `runtimes' is."""
        out = []
        for name, place in self._places.items():
            if name not in runtimes:
                close = closest(name, runtimes)
                hint = f" (did you mean {close}?)" if close else ""
                out.append(replace(place, message=f"no runtime `{name}' is loaded{hint}; its "
                                                  "settings are ignored"))
        return out


def _written(origin: Origin | None, key: str, prefix: str) -> list[str]:
    """The keys below `prefix' of the value at `key', as the file wrote them (one may hold
    dots); those of a variable are split at the dots."""
    if origin is None or not origin.keys:
        return key[len(prefix):].split(".")
    skip = len(origin.path) - len(key) + len(prefix)  # `steep.' and `runtimes.<name>.'
    out = []
    for part in origin.keys:
        if skip > len(part):
            skip -= len(part) + 1
        else:
            out.append(part[skip:])
            skip = 0
    return out


def _along(model: type[Section], written: list[str]) -> tuple[str, ...]:
    """Where a value written at `written' goes in the data of `model': a written key is split
    at its dots only along the class's groups of settings; below a setting each key stays
    whole (a capability `cuda11.8')."""
    out: list[str] = []
    group: type[Section] | None = model
    for i, key in enumerate(written):
        if group is None:
            return (*out, *written[i:])
        pieces = key.split(".")
        for j, piece in enumerate(pieces):
            if group is None:
                out.append(".".join(pieces[j:]))
                break
            out.append(piece)
            group = _group(group, piece)
    return tuple(out)


def _group(model: type[Section], key: str) -> type[Section] | None:
    """The class of `model''s setting `key' when it is a group of settings, else None."""
    name = _attribute_names(model).get(key)
    kind = model.model_fields[name].annotation if name else None
    return kind if isinstance(kind, type) and issubclass(kind, Section) else None
