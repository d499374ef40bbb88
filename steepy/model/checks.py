"""Reading policy objects: every problem of one object collected with its JSON path, values
described in words, durations read with Steep's rules."""

from __future__ import annotations

from typing import Any, Callable, TypeVar

from steepy.model.durations import DurationError, model_duration
from steepy.errors import InputError, Problem, json_path

DURATION_HINT = "a number of milliseconds or a duration such as `500ms', `5s' or `1h 30m'"


class Problems:
    """Collects every problem of one policy object, so the user sees them all at once."""

    def __init__(self) -> None:
        self.items: list[Problem] = []

    def add(self, path: tuple, message: str) -> None:
        self.items.append(Problem(message, path=json_path(path)))

    def raise_if_any(self) -> None:
        if self.items:
            raise InputError(self.items)


T = TypeVar("T")


def read_whole(read: Callable[[Any, tuple, Problems], T | None], data: Any) -> T:
    """A policy object read from `data` by `read(data, path, problems)`, or InputError with
    every problem (what each class's `from_json` does)."""
    problems = Problems()
    result = read(data, (), problems)
    problems.raise_if_any()
    assert result is not None  # no problems: the reader made one
    return result


def describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float, str)):
        return repr(value)
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_keys(data: Any, allowed: tuple[str, ...], what: str, path: tuple, problems: Problems) -> bool:
    """True if `data` is an object; reports unknown keys (naming the allowed ones)."""
    names = ", ".join(allowed)
    if not isinstance(data, dict):
        problems.add(path, f"{what} must be an object with the keys {names}, not {describe(data)}")
        return False
    for key in data:
        if key not in allowed:
            problems.add(path + (str(key),), f"unknown key `{key}' in {what}; allowed keys: {names}")
    return True


def read_duration(value: Any, path: tuple, problems: Problems) -> int | None:
    try:
        return model_duration(value)
    except DurationError as e:
        if isinstance(value, str):
            problems.add(path, f"{e} in {value!r}; expected {DURATION_HINT}")
        elif is_int(value):
            problems.add(path, f"{e}; expected {DURATION_HINT}")
        else:
            problems.add(path, f"expected {DURATION_HINT}, not {describe(value)}")
        return None
