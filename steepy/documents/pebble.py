"""What Pebble's values, filters and tests mean, as Python callables for the Jinja2
environment steepy renders Steep's templates with (steepy/documents/templating.py)."""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple


def inclusive_range(*args: int) -> range:
    """Pebble's `range(low, high[, step])': `high' included."""
    if len(args) == 1:
        return range(args[0] + 1)
    step = args[2] if len(args) > 2 else 1
    return range(args[0], args[1] + (1 if step > 0 else -1), step)


def empty(value: Any) -> bool:
    from jinja2 import Undefined

    return (isinstance(value, Undefined) or value is None
            or (isinstance(value, (str, list, tuple, dict, set)) and len(value) == 0))


def default(value: Any, fallback: Any = "") -> Any:
    """Pebble's `default': also for null and empty values."""
    return fallback if empty(value) else value


def replace(value: Any, old: Any, new: Any = None) -> str:
    """Pebble's `replace({'a': 'b'})'; Jinja's `replace('a', 'b')' works too."""
    text = str(value)
    pairs = old.items() if isinstance(old, Mapping) else [(old, new)]
    for a, b in pairs:
        text = text.replace(str(a), str(b))
    return text


def escape(value: Any) -> Any:
    """Pebble's default HTML escaping of what `{{ }}' writes (`raw' turns it off)."""
    from markupsafe import Markup

    if isinstance(value, Markup):
        return str(value)
    if value is None:
        return ""
    text = value if isinstance(value, str) else pebble_str(value)
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&#39;"))


def pebble_str(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class Entry(NamedTuple):
    """An entry of a map a Pebble `for' walks: `entry.key', `entry.value' (and, Python's way,
    `for key, value in map')."""

    key: Any
    value: Any

    def __str__(self) -> str:  # Java's Map.Entry
        return f"{pebble_str(self.key)}={pebble_str(self.value)}"


def iterable(value: Any) -> Any:
    """What Pebble's `for' walks: a map's entries; nothing for null."""
    if value is None:
        return ()
    if isinstance(value, Mapping):
        return [Entry(k, v) for k, v in value.items()]
    return value


def contains(left: Any, right: Any) -> bool:
    """Pebble's `contains': a list holds the item (or every item of a list), a map the key, a
    string the text."""
    if left is None:
        return False
    if isinstance(left, (list, tuple, set, frozenset)):
        if isinstance(right, (list, tuple, set, frozenset)):
            return all(item in left for item in right)
        return right in left
    if isinstance(left, Mapping):
        try:
            return right in left
        except TypeError:  # not a key at all (a list)
            return False
    if isinstance(left, str):
        return ("null" if right is None else pebble_str(right)) in left
    raise TypeError("Contains operator can only be used on Collections, Maps and arrays. "
                    f"Actual type was: {type(left).__name__}")
