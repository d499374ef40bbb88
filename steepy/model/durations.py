"""Steep's human-readable durations ("1h 30m", "250ms") as integer milliseconds.

Two entry points, as in Steep (reference §7):

* `parse_duration` - the plain parser; a unit is mandatory. Used for configuration values.
* `model_duration` - for model fields (retry delay/maxDelay, timeout policies): a bare
  integer, or a string that is entirely an integer, means milliseconds; anything else goes
  to `parse_duration`.

Every failure is a `DurationError` (also a `ValueError`), never anything else, so callers can
turn it into a user-facing problem without a traceback.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from steepy.errors import SteepyError

__all__ = ["DurationError", "parse_duration", "model_duration", "format_duration",
           "MAX_DURATION_MS", "TOO_LONG", "too_long", "later"]

# Steep stores durations in a Kotlin Long; we keep the same range so values fit in a BIGINT
# column and absurd inputs fail early instead of producing huge Python integers.
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)

_SECOND = 1000
_MINUTE = 60 * _SECOND
_HOUR = 60 * _MINUTE
_DAY = 24 * _HOUR

# Units are case-sensitive (Steep's parser compares exact strings).
_UNITS: dict[str, int] = {
    **dict.fromkeys(("milliseconds", "millisecond", "millis", "milli", "ms"), 1),
    **dict.fromkeys(("seconds", "second", "secs", "sec", "s"), _SECOND),
    **dict.fromkeys(("minutes", "minute", "mins", "min", "m"), _MINUTE),
    **dict.fromkeys(("hours", "hour", "hrs", "hr", "h"), _HOUR),
    **dict.fromkeys(("days", "day", "d"), _DAY),
}

_WS = re.compile(r"\s*")
_NUMBER = re.compile(r"[0-9]+")  # ASCII digits only; no sign, no fraction
_UNIT = re.compile(r"[^\W\d_]+")  # a run of letters; stops at digits, blanks, dots ...
# Kotlin's String.toLongOrNull: optional sign, digits, nothing else (no trimming).
_LONG = re.compile(r"[+-]?[0-9]+")

# Long enough for any value that fits in 64 bits; also keeps int() away from huge strings.
_MAX_DIGITS = 19

# The longest duration a workflow, service or macro may give (a delay, maxDelay, maxElapsed, a
# timeout): 3650 days, about 10 years. Validation refuses a longer one (`too_long`); a longer
# one stored before that rule (or made by exponential backoff) is taken as this long wherever
# it becomes a point in time (`later`), so that no date goes past what datetime can hold.
MAX_DURATION_MS = 3650 * _DAY
TOO_LONG = "is longer than the longest duration steepy accepts, 3650d (about 10 years)"

_HINT = "expected a duration such as `5s' or a number of milliseconds"


class DurationError(SteepyError, ValueError):
    """A duration string or value that cannot be read."""


def parse_duration(text: str) -> int:
    """Parse Steep's duration grammar (unit required) into milliseconds.

    One or more `<digits><blanks?><unit>` pairs with blanks anywhere; the pairs are summed.
    Positions in error messages are 0-based offsets into `text`.
    """
    if not isinstance(text, str):
        raise DurationError(f"Invalid duration: {_HINT}, got {_type_name(text)}")
    if text == "":
        raise DurationError("Invalid duration: empty string")

    total = 0
    pos = _WS.match(text, 0).end()
    end = len(text)
    while True:
        number = _NUMBER.match(text, pos)
        if number is None:
            raise DurationError(f"Expected number at position {pos}")
        number_pos = pos
        pos = _WS.match(text, number.end()).end()

        unit = _UNIT.match(text, pos)
        if unit is None:
            raise DurationError(f"Expected unit at position {pos}")
        factor = _UNITS.get(unit.group())
        if factor is None:
            raise DurationError(f"Unknown duration unit: `{unit.group()}'")
        digits = number.group().lstrip("0") or "0"
        if len(digits) > _MAX_DIGITS:  # also keeps int() away from huge digit strings
            raise DurationError(f"Number too large at position {number_pos}")
        total += int(digits) * factor
        if total > INT64_MAX:
            raise DurationError("Duration too long: more than 2^63-1 milliseconds")
        pos = _WS.match(text, unit.end()).end()
        if pos == end:
            return total


def model_duration(value: int | str) -> int:
    """Read a duration-valued model field: an integer (or integer string) is milliseconds.

    Mirrors Steep's converter, which tries `toLongOrNull()` first: a leading sign is allowed,
    surrounding blanks are not (so " 100" is handed to the plain parser and needs a unit).
    """
    # bool is an int subclass in Python, but `true` is no duration
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise DurationError(f"Invalid duration: {_HINT}, got {_type_name(value)}")
    if isinstance(value, int):
        if not INT64_MIN <= value <= INT64_MAX:
            raise DurationError("Duration too long: does not fit into 64 bits")
        return value
    if _LONG.fullmatch(value):
        sign = "-" if value[0] == "-" else ""
        digits = value.lstrip("+-").lstrip("0") or "0"
        if len(digits) <= _MAX_DIGITS:  # keeps int() away from huge strings
            number = int(sign + digits)
            if INT64_MIN <= number <= INT64_MAX:
                return number
    # Like toLongOrNull, an out-of-range integer string falls through to the parser.
    return parse_duration(value)


def too_long(ms: int) -> bool:
    """Is `ms` refused as a model field's duration (`TOO_LONG` says why)?"""
    return abs(ms) > MAX_DURATION_MS


def later(moment: datetime, ms: int) -> datetime:
    """`moment` plus `ms` milliseconds, `ms` taken as at most `MAX_DURATION_MS` either way:
    never an OverflowError, whatever duration was stored."""
    return moment + timedelta(milliseconds=max(-MAX_DURATION_MS, min(MAX_DURATION_MS, ms)))


def format_duration(ms: int) -> str:
    """A short human-readable form, e.g. "1h 30m", "250ms", "0ms".

    For ms >= 0 the result parses back to the same value with `parse_duration`.
    """
    if ms < 0:
        return "-" + format_duration(-ms)
    if ms == 0:
        return "0ms"
    parts = []
    for unit, size in (("d", _DAY), ("h", _HOUR), ("m", _MINUTE), ("s", _SECOND), ("ms", 1)):
        count, ms = divmod(ms, size)
        if count:
            parts.append(f"{count}{unit}")
    return " ".join(parts)


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, float):
        return "a floating-point number"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
