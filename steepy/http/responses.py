"""Small helpers the routes share: JSON bodies, paging, the request's context."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Query, Request
from starlette.responses import Response

from steepy.http.context import ApiContext

INT_MAX = 2**31 - 1  # the registry's integer columns; larger values are refused (400)

SIZE = Query(10, ge=-INT_MAX, le=INT_MAX,
             description="Maximum number of items to return; a negative number returns all.")
OFFSET = Query(0, ge=-INT_MAX, le=INT_MAX,
               description="Number of items to skip (negative counts as 0).")


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
    """A request body that must be JSON; ApiError 400 otherwise."""
    from steepy.http.errors import ApiError

    try:
        return json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ApiError(400, "The request body must be a JSON object") from None
