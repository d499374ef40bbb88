"""Values no tool can take, refused wherever a document or a value is read (at its place, as
every other problem): a string with a NUL character (not in a command line) or a lone
surrogate (not in UTF-8: it would stop every engine that stores or runs it), a number that
is not finite (JSON has no NaN or infinity), and a document nested more deeply than the
YAML reader reads (storing or answering it would run out of stack)."""

from __future__ import annotations

import math
import re
from typing import Any

from steepy.documents.yamlbuilder import MAX_DEPTH
from steepy.errors import InputError, Problem

NUL = "a NUL character cannot be passed to a tool"
TOO_DEEP = "the document is nested too deeply"  # as the YAML reader says
_SURROGATE = re.compile("[\ud800-\udfff]")
# a surrogate's escape in JSON (`\udc80', even half of a pair), which the YAML reader refuses
SURROGATE_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def shown(text: str) -> str:
    """`text' with its lone surrogates and NUL characters escaped (`\\udc80'): printable."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")


def _surrogate(text: str) -> tuple[int, str] | None:
    """Where the first lone surrogate of `text' is (UTF-8 cannot hold it) and what to say."""
    found = None if text.isascii() else _SURROGATE.search(text)
    return None if found is None else (found.start(), "not valid Unicode: a lone surrogate "
                                       f"{shown(found.group())} cannot be passed to a tool")


def check_unicode(text: str, name: str) -> None:
    """InputError for a text given as a Python string (not read as UTF-8) with a surrogate."""
    if (found := _surrogate(text)) is not None:
        at, why = found
        raise InputError(Problem(why, file=name, line=text.count("\n", 0, at) + 1,
                                 column=at - text.rfind("\n", 0, at)))


def unusable(value: Any) -> str | None:
    """Why a value or key is none a tool can take: a string with a NUL character or a lone
    surrogate, a number that is not finite (JSON has none); None when it is one."""
    if isinstance(value, str):
        if "\x00" in value:
            return NUL
        found = _surrogate(value)
        return found[1] if found else None
    if isinstance(value, float) and not math.isfinite(value):
        number = "NaN" if math.isnan(value) else "-infinity" if value < 0 else "infinity"
        return (f"{number} is not a finite number: a workflow's values are JSON, which has no "
                "NaN or infinity")
    return None


def unusable_values(data: Any, values: bool = True) -> list[tuple[tuple, str]]:
    """(JSON path parts, why) of each value and key of `data' that is `unusable' (unless not
    `values'), in order (a key: at its object); and once ((), why) when it is nested deeper
    than the YAML reader reads (the JSON reader goes on until it runs out of stack, and
    then so would whatever stores or runs the values). One walk without recursion."""
    if not isinstance(data, (dict, list)):
        return [((), why) for why in [unusable(data) if values else None] if why is not None]
    found: list[tuple[tuple, str]] = []
    stack = [((), isinstance(data, dict),
              iter(data.items() if isinstance(data, dict) else enumerate(data)))]
    while stack:  # (the cheap tests first: most strings are ASCII, most values no floats)
        parts, is_object, entries = stack[-1]
        for key, value in entries:
            if is_object and values and (type(key) is not str or "\x00" in key or
                                         not key.isascii()) and (why := unusable(key)):
                found.append((parts, f"key `{shown(str(key))}': {why}"))
            elif type(value) is str:
                if values and ("\x00" in value or not value.isascii()) and \
                        (why := unusable(value)):
                    found.append((parts + (key,), why))
            elif isinstance(value, (dict, list)):
                if len(stack) >= MAX_DEPTH:
                    return found + [((), TOO_DEEP)]
                is_dict = isinstance(value, dict)
                stack.append((parts + (key,), is_dict, iter(value.items() if is_dict else
                                                            enumerate(value))))
                break
            elif values and isinstance(value, float) and (why := unusable(value)):
                found.append((parts + (key,), why))
        else:
            stack.pop()
    return found
