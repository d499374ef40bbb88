"""Error responses as Steep writes them: plain text whose first line is Steep's message,
whatever the client accepts (Steep's web UI asks for JSON and shows the body). Bad input adds
its located problems, one `file:line:column: path: message` per line after a blank line, and
the same as a JSON list in the `X-Steepy-Problems` header for programs (steepy's client and
editor). No error ever carries a traceback."""

from __future__ import annotations

import json
import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from steepy.errors import PROBLEMS_HEADER, Problem, SteepyError
from steepy.registry.failures import database_errors, describe, is_database_failure

log = logging.getLogger(__name__)


class ApiError(SteepyError):
    """An answer other than success: HTTP status, message and (for bad input) problems."""

    def __init__(self, status: int, message: str, problems: list[Problem] | None = None,
                 headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.problems = problems or []
        self.headers = headers or {}


PROBLEMS_HEADER_MAX = 8000
"""Characters of the header at most (a client reads some 16 KB of headers): the problems
that do not fit are left out of it, never out of the body."""


def problems_header(problems: list[Problem]) -> str:
    """The problems as a JSON list in ASCII, the first ones that fit in PROBLEMS_HEADER_MAX."""
    items: list[str] = []
    length = 2
    for p in problems:
        item = json.dumps(p.to_json(), separators=(",", ":"))
        if length + len(item) + 1 > PROBLEMS_HEADER_MAX:
            break
        items.append(item)
        length += len(item) + 1
    return "[" + ",".join(items) + "]"


def error_response(request: Request | None, status: int, message: str,
                   problems: list[Problem] | None = None,
                   headers: dict[str, str] | None = None) -> Response:
    """`request` is unused: the answer is the same for every client."""
    problems = sorted(problems or [], key=lambda p: (p.file or "", p.line or 0, p.column or 0))
    headers = dict(headers or {})
    text = message
    if problems:
        text += "\n\n" + "\n".join(str(p) for p in problems)
        headers[PROBLEMS_HEADER] = problems_header(problems)
    return Response(text, status, headers=headers, media_type="text/plain; charset=utf-8")


STEEP_PARAMETER_TEXTS = {
    ("query", "status"): "Invalid status: {}",
    ("path", "runNumber"): "Invalid run number `{}'",
    ("query", "runNumber"): "Invalid run number",
}
"""Steep's words for a parameter it cannot read, by where the parameter is and its name."""


def _validation_message(exc: RequestValidationError) -> str:
    for e in exc.errors():
        text = STEEP_PARAMETER_TEXTS.get(tuple(e.get("loc", ())))
        if text is not None:
            return text.format(e.get("input", ""))
    parts = []
    for e in exc.errors():
        where = ".".join(str(x) for x in e.get("loc", ()) if x not in ("query", "path", "header"))
        parts.append(f"{where}: {e.get('msg', 'invalid')}" if where else e.get("msg", "invalid"))
    return "Invalid request: " + "; ".join(parts)


def install(app: FastAPI) -> None:
    """Steep's status codes: bad parameters are 400 (not 422), and unexpected failures a
    plain 500 without details."""

    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> Response:
        return error_response(request, exc.status, exc.message, exc.problems, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> Response:
        return error_response(request, 400, _validation_message(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        message = exc.detail if isinstance(exc.detail, str) else "Error"
        return error_response(request, exc.status_code, message, headers=exc.headers)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:
        log.error("unexpected error in %s %s", request.method, request.url.path, exc_info=exc)
        return error_response(request, 500, "Internal server error")

    async def database_error(request: Request, exc: Exception) -> Response:
        """The database fails (its file is gone or broken, its disk full, its server down):
        503 and one line in the log, no traceback; a statement the database refuses is a
        bug, a 500 like any other."""
        if not is_database_failure(exc):
            return await unexpected(request, exc)
        ctx = getattr(request.app.state, "ctx", None)
        url = ctx.registry.db.url if ctx is not None else None
        log.error("%s %s: %s", request.method, request.url.path, describe(exc, url))
        return error_response(request, 503, DATABASE_UNAVAILABLE,
                              headers={"Retry-After": str(RETRY_AFTER_S)})

    # (handlers of these classes answer where the error happened; the one of `Exception'
    # answers from the outermost middleware, which then raises it again for the log)
    for kind in database_errors():
        app.add_exception_handler(kind, database_error)


DATABASE_UNAVAILABLE = "The database is unavailable; try again later"
RETRY_AFTER_S = 5
