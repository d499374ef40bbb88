"""pydantic's errors of the configuration's model (or of a group of it) as Problems at the
place each value came from (steepy.config.located)."""

from __future__ import annotations

import re
from typing import Any

from steepy.config.located import Origin, base
from steepy.config.section import Section, _attribute_names, _leaves
from steepy.errors import Problem, json_path
from steepy.model.common import type_name as _kind


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
