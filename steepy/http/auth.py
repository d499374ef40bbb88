"""Bearer-token authentication: with a token configured, every request but `GET /health`
must carry `Authorization: Bearer <token>`."""

from __future__ import annotations

import hmac

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from steepy.http.errors import error_response

OPEN = {("GET", "/health"), ("HEAD", "/health")}


class BearerAuth:
    def __init__(self, app: ASGIApp, token: str | None):
        self.app = app
        self.expected = f"Bearer {token}".encode() if token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (self.expected is None or scope["type"] != "http"
                or (scope["method"], scope["path"]) in OPEN):
            await self.app(scope, receive, send)
            return
        given = dict(scope["headers"]).get(b"authorization", b"")
        if hmac.compare_digest(given, self.expected):  # constant time: no timing oracle
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        message = ("Missing bearer token" if not given else "Invalid bearer token")
        response = error_response(request, 401, message,
                                  headers={"WWW-Authenticate": 'Bearer realm="steepy"'})
        await response(scope, receive, send)
