"""Error responses: Steep answers errors with a plain-text message; a client that asks for
JSON first (`Accept: application/json`) gets `{"status", "message", "errors"?}` instead.
No error ever carries a traceback."""

from __future__ import annotations

import json
import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from steepy.errors import Problem, SteepyError
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


def wants_json(accept: str | None) -> bool:
    """True when the Accept header ranks application/json above text/plain."""
    best: dict[str, float] = {}
    for position, part in enumerate((accept or "").split(",")):
        media, *params = [p.strip() for p in part.split(";")]
        quality = 1.0
        for p in params:
            if p.startswith("q="):
                try:
                    quality = float(p[2:])
                except ValueError:
                    quality = 0.0
        best.setdefault(media.lower(), quality - position * 1e-6)  # earlier wins ties
    return best.get("application/json", -1.0) > max(best.get("text/plain", -1.0), -0.5)


def problem_line(p: Problem) -> str:
    return str(p)


def error_response(request: Request | None, status: int, message: str,
                   problems: list[Problem] | None = None,
                   headers: dict[str, str] | None = None) -> Response:
    problems = sorted(problems or [], key=lambda p: (p.file or "", p.line or 0, p.column or 0))
    accept = request.headers.get("accept") if request is not None else None
    if wants_json(accept):
        body: dict = {"status": status, "message": message}
        if problems:
            body["errors"] = [p.to_json() for p in problems]
        return Response(json.dumps(body), status, headers=headers,
                        media_type="application/json")
    text = message
    if problems:
        text += "\n\n" + "\n".join(problem_line(p) for p in problems)
    return Response(text + "\n", status, headers=headers, media_type="text/plain; charset=utf-8")


def _validation_message(exc: RequestValidationError) -> str:
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
