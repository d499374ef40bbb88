"""Small helpers the routes share: JSON bodies, paging, the request's context."""

from __future__ import annotations

import json
import re
from typing import Any

from fastapi import Depends, Query, Request
from starlette.responses import Response

from steepy.http.context import ApiContext

INT_MAX = 2**31 - 1  # the registry's integer columns; larger values are refused (400)

_INT = re.compile(r"[+-]?[0-9]+")


def int_or(text: str | None, default: int) -> int:
    """Kotlin's toIntOrNull with a default, as Steep reads `size` and `offset`: anything but
    a 32-bit integer (`abc`, `1.5`, `99999999999`) is the default."""
    if text is None or not _INT.fullmatch(text):
        return default
    value = int(text)
    return value if -2**31 <= value < 2**31 else default


def _size(size: str | None = Query(None, description="Maximum number of items to return "
                                                     "(10); a negative number returns all; "
                                                     "not a number: 10.")) -> int:
    return int_or(size, 10)


def _offset(offset: str | None = Query(None, description="Number of items to skip (0); "
                                                         "negative or not a number: 0.")) -> int:
    return max(0, int_or(offset, 0))


SIZE = Depends(_size)
OFFSET = Depends(_offset)


def context(request: Request) -> ApiContext:
    return request.app.state.ctx


def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    body = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return Response(body, status, headers=headers, media_type="application/json")


def page_response(items: list, total: int, size: int, offset: int) -> Response:
    """A list with Steep's paging headers."""
    return json_response(items, headers={"x-page-size": str(size),
                                         "x-page-offset": str(max(0, offset)),
                                         "x-page-total": str(total)})


def json_body(raw: bytes) -> Any:
    """A request body that must be JSON; ApiError 400 with Steep's words otherwise."""
    from steepy.http.errors import ApiError

    if not raw.strip():
        raise ApiError(400, "Missing request body")
    try:
        return json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise ApiError(400, f"Invalid request body: {e}") from None
