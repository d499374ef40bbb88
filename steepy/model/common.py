"""Small helpers shared by the model classes.

The `from_json` readers of the model convert documents that passed the JSON Schema (and, for
input files, are checked by the validation modules afterwards), or that steepy wrote itself:
they trust the shape (types, required keys, enums) and raise only for what cannot be converted,
each such rule in one place: a variable defined twice (the model holds one variable per id) and
the values of retry and timeout policies (durations, ranges; `steepy.model.policies`).
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from collections.abc import Iterator, Mapping
from datetime import datetime, timezone
from typing import Any

from steepy.errors import InputError, Problem, json_path
from steepy.model.timeouts import TimeoutKind


def scalar_text(value: Any) -> str:
    """A value as Steep writes it into a string field: booleans lower-case, numbers as text,
    objects and lists as compact JSON, null as `null' (Python's `None' is no word of a
    workflow's)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def argument_text(value: Any) -> str:
    """A workflow's value as a tool's argument: Steep's `toString()' of what Jackson read,
    so a fraction as Java's Double.toString writes it (`scalar_text' else)."""
    return java_double(value) if isinstance(value, float) else scalar_text(value)


def java_double(value: float) -> str:
    """`value' as Java's Double.toString writes it: `1.0', `0.001', `1.0E-4', `2.0E7' (its
    shortest digits, as Python's repr has them; plain from 10^-3 up to 10^7, else with an
    exponent), `NaN', `Infinity'."""
    if value != value:
        return "NaN"
    if value in (math.inf, -math.inf):
        return "Infinity" if value > 0 else "-Infinity"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    size = abs(value)
    if size == 0 or 1e-3 <= size < 1e7:
        return sign + repr(size)  # (plain there: repr uses an exponent below 1e-4, from 1e16)
    shown = Decimal(repr(size)).as_tuple()
    digits = "".join(map(str, shown.digits)).rstrip("0") or "0"
    exponent = len(shown.digits) + int(shown.exponent) - 1
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exponent}"


def as_list(value: Any) -> list:
    """Steep accepts a single value where a list is expected (dependsOn)."""
    if value is None:
        return []
    if isinstance(value, list):
        return value
    return [value]


def problem(path: tuple, message: str) -> InputError:
    return InputError(Problem(message, path=json_path(path)))


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def put(out: dict, key: str, value: Any) -> None:
    """Write `key` only when it has a value (Steep's writer drops nulls)."""
    if value is not None:
        out[key] = value


def nested(reader, value: Any, path: tuple):
    """Read a nested object and put the enclosing path in front of its problems' paths."""
    try:
        return reader(value)
    except InputError as e:
        raise e.within(path) from None


# The retry and timeout policies a service, execute action or executable may carry:
# (JSON key, attribute)
POLICY_FIELDS = (("retries", "retries"),
                 *((kind.value, kind.attribute) for kind in TimeoutKind))


def read_retries(data: dict, path: tuple):
    from steepy.model.policies import RetryPolicy

    value = data.get("retries")
    return None if value is None else nested(RetryPolicy.from_json, value, path + ("retries",))


def read_policies(data: dict, path: tuple) -> dict[str, Any]:
    """The policies of `data` by attribute name (None where absent), for a constructor; the
    problems of all of them at once, not only those of the first bad one."""
    from steepy.model.policies import RetryPolicy, TimeoutPolicy

    out: dict[str, Any] = {}
    problems: list[Problem] = []
    for key, attr in POLICY_FIELDS:
        value = data.get(key)
        reader = RetryPolicy.from_json if key == "retries" else TimeoutPolicy.from_json
        try:
            out[attr] = None if value is None else nested(reader, value, path + (key,))
        except InputError as e:
            problems += e.problems
    if problems:
        raise InputError(problems)
    return out


def write_policies(out: dict, owner: Any) -> None:
    """Write the retry and timeout policies of a service, action or executable."""
    for key, attr in POLICY_FIELDS:
        policy = getattr(owner, attr)
        if policy is not None:
            out[key] = policy.to_json()


def iso_time(value: datetime | None) -> str | None:
    """UTC time as Steep writes it: ISO 8601 with a `Z'."""
    return None if value is None else value.isoformat().replace("+00:00", "Z")


def as_utc(value: datetime | None) -> datetime | None:
    """A stored time as UTC: SQLite hands back naive datetimes, which were written in UTC."""
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    return value


def utcnow() -> datetime:
    """Now, in UTC (every stored and reported time is)."""
    return datetime.now(timezone.utc)


# Steep's runtime of a service that names none: its path is run as it is (`runtimes.default'
# may choose another runtime for these services)
DIRECT_RUNTIME = "other"


def strings_in(value: Any) -> Iterator[str]:
    """Every string in a JSON-like value: itself, or those in its lists and in the values of
    its mappings, at any depth (without recursion)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
