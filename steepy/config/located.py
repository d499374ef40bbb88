"""Configuration values with the place they came from (a file's line and column, or a
variable): what reading the configuration and checking a runtime's section share. No
pydantic here (steepy.config.problems turns its errors into Problems at these places), so
that the commands that only read the database can take plain values without it (issue 31)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Mapping

from steepy.errors import Problem

if TYPE_CHECKING:
    from steepy.documents.loading import Document

ENV_PREFIXES = ("STEEPY_", "STEEP_")  # the first one set wins


def _strip(key: str) -> str:
    """A key without Steep's `steep.' (or `steepy.') in front."""
    for prefix in ("steepy.", "steep."):
        if key.startswith(prefix):
            return key[len(prefix):]
    return key


@dataclass
class Origin:
    """Where a value came from: a path in a document, or an environment variable."""

    document: Document | None = None
    path: str = ""
    variable: str | None = None
    keys: tuple[str, ...] = ()  # the document's keys on `path', as written (one may hold dots)

    def problem(self, message: str, key: str) -> Problem:
        """A problem about `key` (maybe with a tail such as `[1]') located here."""
        if self.document is None:
            return Problem(message, path=key, file=f"${self.variable}")
        tail = key[len(base(key)):]
        return replace(self.document.locate(Problem(message, path=self.path + tail)), path=key)


def base(key: str) -> str:
    return key.split("[", 1)[0]  # `agent.capabilities[1]' -> `agent.capabilities'


def environment(environ: Mapping[str, str], raw: dict, origins: dict,
                leaves: Mapping[str, bool], problems: list[Problem] | None = None) -> None:
    """STEEPY_<KEY> / STEEP_<KEY> values of the keys `leaves' (-> whether the value is
    text), read as YAML, override the file's (also what the file has below that key). A
    value that is no YAML is taken as its text, unless it opens a list or an object (`[gpu,
    x'): that is a problem of the variable (in `problems')."""
    for key, is_text in leaves.items():
        for prefix in ENV_PREFIXES:
            variable = prefix + key.upper().replace(".", "_")
            text = environ.get(variable)
            if text is None or not text.strip():
                continue
            if is_text and _PLAIN.fullmatch(text):
                value = text
            else:
                value, error = _yaml_value(text)
                if error is not None and problems is not None \
                        and text.lstrip().startswith(("[", "{")):
                    problems.append(Problem(f"not valid YAML: {error}", path=key,
                                            file=f"${variable}"))
                    break
            if is_text and not isinstance(value, str):
                value = text  # a token `00123' stays a string, not the number 123
            for below in [k for k in raw if k.startswith(key + ".")]:
                del raw[below]
            raw[key] = value
            origins[key] = Origin(variable=variable)
            break


TYPO = 0.85  # how alike a variable's name must be to a key's to be called a misspelling of it


def misspelt_variables(environ: Mapping[str, str], leaves: Mapping[str, bool],
                       others: tuple[str, ...] = ()) -> list[Problem]:
    """Warnings for the STEEPY_/STEEP_ variables whose name is a key's misspelt
    (`$STEEPY_AGENT_CAPABILITES'), as an unknown key of the file is warned of. Only a close
    one: steepy gives its tools variables of its own (STEEPY_ATTEMPT, ...), and reads some
    that are no keys (STEEPY_SERVER, the runtimes' sections, `others': Steep's keys that it
    lacks)."""
    import difflib

    known = {key.upper().replace(".", "_"): key for key in leaves}
    skipped = tuple(key.upper().replace(".", "_") for key in others) + ("RUNTIMES_",)
    warnings = []
    for variable in sorted(environ):
        prefix = next((p for p in ENV_PREFIXES if variable.startswith(p)), None)
        name = variable[len(prefix):] if prefix else ""
        if not name or name in known or name.startswith(skipped):
            continue
        close = difflib.get_close_matches(name, list(known), n=1, cutoff=TYPO)
        if close:
            warnings.append(Problem(f"unknown variable (ignored); did you mean "
                                    f"${prefix}{close[0]} ({known[close[0]]})?",
                                    file=f"${variable}"))
    return warnings


# a variable's text that YAML reads as itself or as a number, date, true, null: a text key
# takes it as written without YAML (importing YAML costs 0.01 s of a command's start)
_PLAIN = re.compile(r"[\w./~][\w./~:@+-]*")


def _yaml_value(text: str) -> tuple[Any, str | None]:
    """The value `text' is as YAML, or the text itself and why it is no YAML."""
    import yaml

    try:
        return yaml.safe_load(text), None
    except yaml.YAMLError as e:
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        context = getattr(e, "context", None)
        return text, problem + (f" ({context})" if context else "")


def nest(flat: Mapping[str, Any] | Mapping[tuple[str, ...], Any]) -> dict[str, Any]:
    """Objects of objects from dotted keys (`agent.instances'), or from tuples of keys when
    a key may hold a dot; no key may be above another."""
    out: dict[str, Any] = {}
    for key, value in flat.items():
        *parents, last = key.split(".") if isinstance(key, str) else key
        node = out
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return out
