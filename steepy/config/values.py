"""The types of configuration values: what each kind of key accepts (Steep's durations with
a unit, sizes like `10 MB', names as a list or a comma-separated string, paths, event
patterns) and how it is read, for the pydantic model in model.py."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator

from steepy.config.urls import database_url  # noqa: F401 (re-exported: its home is urls.py)
from steepy.model.durations import DurationError, parse_duration
from steepy.model.common import type_name as _kind

def no_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError(f"expected a whole number, got a boolean `{str(value).lower()}'")
    return value


def duration_ms(value: Any) -> int:
    """Steep's duration grammar, unit required (configuration values call toDuration())."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"expected a duration such as `5s' or `250ms', got {_kind(value)}")
    text = str(value)
    try:
        return parse_duration(text)
    except DurationError as e:
        bare = text.strip()
        hint = (f"; a duration here needs a unit, e.g. `{bare}s' or `{bare}ms'" if bare.isdigit()
                else "; e.g. `5s', `250ms' or `1m 30s'")
        raise ValueError(f"`{text}' is not a duration: {e}{hint}") from None


_SIZE = re.compile(r"\s*(\d+)\s*([kmg]?)(i?b)?\s*", re.IGNORECASE)


def parse_size(value: Any) -> int:
    """Bytes from a positive integer or a size such as `10 MB' (10^6), `10MiB' (2^20) or
    `512k'; ValueError otherwise."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    match = _SIZE.fullmatch(value) if isinstance(value, str) else None
    if not match or int(match[1]) <= 0:
        raise ValueError(f"`{value}' is not a size like 10485760 or `10 MB'")
    power = "kmg".find(match[2].lower()) + 1 if match[2] else 0
    base = 1024 if (match[3] or "").lower() == "ib" else 1000
    return int(match[1]) * base**power


def _capabilities(value: Any) -> Any:
    """A YAML list, or one string of comma-separated names (`gpu' or `gpu,docker')."""
    if isinstance(value, str):
        return [name.strip() for name in value.split(",") if name.strip()]
    return [] if value is None else value


def string_list(value: Any) -> Any:
    """A list of strings; one string is a list of one (docker's `-e A=1,2' has commas)."""
    return [] if value is None else [value] if isinstance(value, str) else value


def _paths(value: Any) -> Any:
    """A file, folder or glob, or a list of them (services, macros); null: none."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if value is None or isinstance(value, str) and value or (
            isinstance(value, list) and all(isinstance(v, str) and v for v in value)):
        return [] if value is None else value
    raise ValueError("expected a file, folder or glob, or a list of them, "
                     f"got {_kind(value)}{'' if value else ' (empty)'}")


Int = Annotated[int, BeforeValidator(no_bool)]
Duration = Annotated[int, BeforeValidator(duration_ms)]  # milliseconds
Size = Annotated[int, BeforeValidator(parse_size)]  # bytes
Names = Annotated[list[str], BeforeValidator(_capabilities)]
Strings = Annotated[list[str], BeforeValidator(string_list)]
Paths = Annotated[str | list[str], BeforeValidator(_paths)]


def _event_pattern(text: str) -> str:
    from steepy.events.webhooks import parse_pattern  # (the webhooks' sections alone need it)

    parse_pattern(text)  # ValueError: it names no event
    return text


EventPattern = Annotated[str, AfterValidator(_event_pattern)]
