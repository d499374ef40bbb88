"""The JSON Schemas of workflows, service metadata and macros (package data: the top-level
schemas/ links here, so that an installed wheel validates), and their errors in plain words:
one problem per failing place, with its JSON path."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

from steepy.model.durations import DurationError, model_duration, TOO_LONG, too_long
from steepy.model.suggestions import closest
from steepy.errors import Problem, json_path

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schemas"


@lru_cache(maxsize=None)
def _validators() -> dict[str, Any]:
    """The three schemas, compiled once, sharing one registry for cross-file $refs."""
    from jsonschema import Draft202012Validator, validators
    from referencing import Registry, Resource

    schemas = {}
    for kind in ("workflow", "service", "macro"):
        with open(SCHEMA_DIR / f"{kind}.schema.json", encoding="utf-8") as f:
            schemas[kind] = json.load(f)
    registry = Registry().with_resources(
        (s["$id"], Resource.from_contents(s)) for s in schemas.values() if "$id" in s)
    checker = validators.extend(Draft202012Validator, {"maxDuration": _max_duration})
    return {kind: checker(schema, registry=registry) for kind, schema in schemas.items()}


def _max_duration(validator: Any, limit: int, instance: Any, schema: dict) -> Iterator[Any]:
    """steepy's keyword `maxDuration': a duration string (or number) at most `limit' ms
    long (steepy.model.durations.MAX_DURATION_MS); one that cannot be read is left to the
    other keywords and the model."""
    from jsonschema.exceptions import ValidationError

    try:
        ms = model_duration(instance)
    except DurationError:
        return
    if abs(ms) > limit or too_long(ms):
        yield ValidationError(f"`{_plain(instance)}' {TOO_LONG}")


def _plain(value: Any) -> str:
    """A value as the YAML that gives it: `false', not Python's `False'."""
    return value if isinstance(value, str) else json.dumps(value)


class KeyProblem(Problem):
    """A problem of a key itself (one the schema does not know): placed at the key, not at
    its value (steepy.documents.loading.Document.locate)."""


def _unknown_keys(error: Any) -> list[str]:
    """The keys an additionalProperties error is about, in the order written."""
    allowed = error.schema.get("properties", {})
    value = error.instance
    return [k for k in value if k not in allowed] if isinstance(value, dict) else []


def _unknown_key_message(error: Any, key: str) -> str:
    allowed = sorted(error.schema.get("properties", {}))
    close = closest(key, allowed)
    hint = f" (did you mean `{close}'?)" if close else ""
    return f"unknown property `{key}'{hint}; allowed here: {', '.join(allowed)}"


def _schema_message(error: Any) -> str:
    """Plain words for a jsonschema error."""
    validator, value = error.validator, error.instance
    if validator == "additionalProperties":
        extra = _unknown_keys(error)
        if len(extra) == 1:
            return _unknown_key_message(error, extra[0])
        allowed = sorted(error.schema.get("properties", {}))
        names = ", ".join(f"`{k}'" for k in extra) or "a property"
        return f"unknown property {names}; allowed here: {', '.join(allowed)}"
    if validator == "required":
        missing = [k for k in error.validator_value if isinstance(value, dict) and k not in value]
        return f"`{missing[0] if missing else error.validator_value[0]}' is required"
    if validator == "enum":
        allowed = ", ".join(map(_plain, error.validator_value))
        return f"`{_plain(value)}' is not allowed here; allowed: {allowed}"
    if validator == "type":
        expected = error.validator_value
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        return f"expected {expected}, got {_kind(value)} `{_short(value)}'"
    if validator in ("oneOf", "anyOf"):
        choice = _choice_message(error)
        if choice is not None:
            return choice
        best = _best_sub_error(error)
        if best is not None:
            return _schema_message(best)
    if validator == "minimum":
        return f"{value} is too small; the minimum is {error.validator_value}"
    if validator == "maximum":
        return f"{value} is too large; the maximum is {error.validator_value}"
    if validator == "maxDuration":
        return error.message
    if validator == "pattern":
        description = error.schema.get("description")
        hint = f" ({description})" if description else ""
        return f"`{value}' does not have the expected form{hint}"
    description = error.schema.get("description")
    return error.message + (f" ({description})" if description else "")


def _choice_message(error: Any) -> str | None:
    """A oneOf (anyOf) whose branches each require one key, e.g. an input's `var' or
    `value': none of them given, or more than one for a oneOf, in plain words (jsonschema
    would name one key as required, or print the object and every branch). None: nothing
    of the kind; "": nothing to say (a value that is no object, its type error says so)."""
    branches, value = error.validator_value, error.instance
    keys = [b["required"][0] for b in branches if isinstance(b, dict)
            and set(b) <= {"required", "description"} and len(b.get("required", ())) == 1]
    if len(keys) != len(branches) or len(keys) < 2:
        return None
    if not isinstance(value, dict):  # `required' holds for it: its type is the problem,
        return ""  # which the type's own error says (nothing more to say here)
    given = [k for k in keys if k in value]
    named = ", ".join(f"`{k}'" for k in keys[:-1]) + f" or `{keys[-1]}'"
    if not given:
        return f"{named} is required"
    if len(given) > 1 and error.validator == "oneOf":
        both = ", ".join(f"`{k}'" for k in given[:-1]) + f" and `{given[-1]}'"
        return f"{both} are given: give only one of them"
    return None


def _best_sub_error(error: Any) -> Any:
    from jsonschema.exceptions import best_match

    context = list(error.context or [])
    return best_match(context) if context else None


def _kind(value: Any) -> str:
    from steepy.model.common import type_name

    return type_name(value)


def _short(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


# what a whole document must be, for a document of the wrong type
_DOCUMENT_SHAPES = {"workflow": "a workflow must be an object with `api' and `actions'",
                    "service": "service metadata must be a service (an object) or a list of them",
                    "macro": "a macro file must hold a macro (an object) or a list of them"}


@dataclass
class SchemaError:
    """One place the schema rejects: the problem, the JSON path as parts, and whether it is
    a key the schema does not know (the key alone is wrong, not the object around it)."""

    problem: Problem
    parts: tuple
    unknown_key: bool = False
    missing_key: bool = False  # a required key is missing (the object is where it should be)


def schema_errors(data: Any, kind: str) -> list[SchemaError]:
    """The places where `data` fails schemas/<kind>.schema.json, one per failing place (each
    unknown key is a place of its own, at the key)."""
    validator = _validators()[kind]
    found: list[SchemaError] = []
    seen: set[tuple[str, str]] = set()
    for error in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path))):
        leaf = error
        if error.validator in ("oneOf", "anyOf") and error.context:
            leaf = _best_sub_error(error) or error
        parts = list(leaf.absolute_path)
        keys = _unknown_keys(leaf) if leaf.validator == "additionalProperties" else []
        if keys:
            for key in keys:
                path = json_path(parts + [key])
                message = _unknown_key_message(leaf, key)
                if (path, message) not in seen:
                    seen.add((path, message))
                    found.append(SchemaError(KeyProblem(message, path=path),
                                             tuple(parts) + (key,), unknown_key=True))
            continue
        path = json_path(parts)
        if not parts and leaf.validator == "type":
            message = f"{_DOCUMENT_SHAPES[kind]}, not {_kind(data)}"
        else:
            message = _schema_message(error)
            if not message:  # said by another error of the same place
                continue
        missing = leaf.validator == "required"
        at_root = not parts or (len(parts) == 1 and isinstance(parts[0], int))
        if missing and at_root and kind != "workflow":
            needed = " and ".join(", ".join(f"`{k}'" for k in leaf.validator_value).rsplit(", ", 1))
            message += f": a {kind} needs {needed}"  # the document's own kind, said
        if (path, message) not in seen:
            seen.add((path, message))
            found.append(SchemaError(Problem(message, path=path), tuple(parts),
                                     missing_key=missing))
    return found


def schema_problems(data: Any, kind: str) -> list[Problem]:
    """Problems of `data` against schemas/<kind>.schema.json, one per failing place."""
    return [e.problem for e in schema_errors(data, kind)]
