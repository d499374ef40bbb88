"""Configuration values with the place they came from (a file's line and column, or a
variable), and pydantic's errors turned into Problems at those places: what reading the
configuration and checking a runtime's section share."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Mapping

from steepy.config.section import Section, _attribute_names, _leaves
from steepy.errors import Problem, json_path
from steepy.model.common import type_name as _kind

if TYPE_CHECKING:
    from steepy.documents.loading import Document

ENV_PREFIXES = ("STEEPY_", "STEEP_")  # the first one set wins


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
                leaves: Mapping[str, bool]) -> None:
    """STEEPY_<KEY> / STEEP_<KEY> values of the keys `leaves' (-> whether the value is
    text), read as YAML, override the file's (also what the file has below that key)."""
    for key, is_text in leaves.items():
        for prefix in ENV_PREFIXES:
            variable = prefix + key.upper().replace(".", "_")
            text = environ.get(variable)
            if text is None or not text.strip():
                continue
            value = text if is_text and _PLAIN.fullmatch(text) else _yaml_value(text)
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


def _yaml_value(text: str) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


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


_MESSAGES = {
    "int_parsing": "expected a whole number, got {kind} `{input}'",
    "int_type": "expected a whole number, got {kind}",
    "int_from_float": "expected a whole number, got `{input}'",
    "string_type": "expected a string, got {kind}",
    "list_type": "expected a list, got {kind}",
    "dict_type": "expected an object, got {kind}",
    "greater_than_equal": "must be at least {ge}, got {input}",
    "greater_than": "must be more than {gt}, got {input}",
    "less_than_equal": "must be at most {le}, got {input}",
    "string_too_short": "must not be empty",
    "literal_error": "`{input}' is not allowed here; expected {allowed}",
    "missing": "is required",
    "extra_forbidden": "unknown key",
}


def problem_of(error: Any, origins: dict[str, Origin], fallback: str, root: type[Section],
               prefix: str = "") -> Problem:
    """A pydantic error of `root' (Config, or a group of it read from the keys below
    `prefix') as a Problem at the place its value came from."""
    loc, model = list(error["loc"]), root
    for i, part in enumerate(loc):  # field names (a default's errors) -> Steep's names
        name = _attribute_names(model).get(part) if isinstance(part, str) else None
        if name is None:
            break
        info = model.model_fields[name]
        loc[i], model = info.alias or name, info.annotation
        if not (isinstance(model, type) and issubclass(model, Section)):
            break
    leaves = {prefix + key for key in _leaves(root)}
    cut = next((i for i in range(len(loc), 0, -1)
                if prefix + ".".join(map(str, loc[:i])) in leaves), len(loc))
    tail = json_path(loc[cut:])
    key = prefix + ".".join(map(str, loc[:cut])) + ("." if tail and tail[0] != "[" else "") + tail
    template = _MESSAGES.get(error["type"])
    if template:
        context = error.get("ctx", {})
        allowed = context.get("expected", "").replace("'", "")
        message = template.format(kind=_kind(error.get("input")), input=error.get("input"),
                                  allowed=allowed, **context)
    else:
        message = re.sub(r"^Value error, ", "", error["msg"])
    # the value's own place, else that of the setting it is in (a variable's whole mapping)
    origin = origins.get(base(key)) or origins.get(prefix + ".".join(map(str, loc[:cut])))
    if origin is None:  # a default that clashes with a value given next to it
        section = key.rsplit(".", 1)[0] + "."
        origin = next((o for k, o in origins.items() if k in leaves and k.startswith(section)),
                      None)
    if origin is None:
        return Problem(message, path=key.rstrip("."), file=fallback)
    return origin.problem(message, key)
