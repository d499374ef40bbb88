"""`http.allowRoutes` (Steep's option): a regular expression; only the routes whose path it
matches as a whole are served, every other route answers 404 as an unknown path does.

As in Steep, the expression is matched against a route's declared path in Steep's spelling,
not against the request's path: `/workflows/:id/?` for `/workflows/{id}` (a route with
parameters ends in `/?`), `/eventbus/` for the event bus, `/_next/` and `/favicons/` for the
assets of Steep's web UI. So `/|/services` serves `GET /` and `GET /services` only, and
`/workflows.*` every route of submissions. A path no API route has (steepy's own pages and
assets) is matched as it is requested, below the base path."""

from __future__ import annotations

import re

from starlette.requests import Request
from starlette.routing import BaseRoute, compile_path
from starlette.types import ASGIApp, Receive, Scope, Send

from steepy.http.basepath import route_path
from steepy.http.errors import error_response

_PARAMETER = re.compile(r"\{([^}:]+)(:[^}]*)?\}")
_PREFIXES = ("/eventbus/", "/_next/", "/favicons/", "/ui/static/")
"""Paths below one of these are one route each, as Steep declares `/eventbus/*`."""


def steep_path(path: str) -> str:
    """A route's path as Steep declares it: `/processchains/:id/runs/:runNumber/?`."""
    for prefix in _PREFIXES:
        if path.startswith(prefix) or path == prefix.rstrip("/"):
            return prefix
    spelled, parameters = _PARAMETER.subn(lambda m: ":" + m[1], path)
    return spelled + "/?" if parameters else spelled


def route_paths(routes: list[BaseRoute], prefix: str = "") -> list[str]:
    """The declared paths of `routes`, also of the routers included in them."""
    paths: list[str] = []
    for route in routes:
        if isinstance(getattr(route, "path", None), str):
            paths.append(prefix + route.path)
        elif hasattr(route, "original_router"):  # FastAPI's included router
            context = getattr(route, "include_context", None)
            paths += route_paths(route.original_router.routes,
                                 prefix + getattr(context, "prefix", ""))
    return paths


class AllowRoutes:
    """ASGI middleware below BasePath: 404 for a request whose route the expression leaves
    out. `routes` are the API's; the first whose path matches the request's (whatever the
    method) is the request's route."""

    def __init__(self, app: ASGIApp, allowed: re.Pattern[str], routes: list[BaseRoute]):
        self.app = app
        self.allowed = allowed
        self.routes = routes
        self.known: list[tuple[re.Pattern[str], str]] | None = None  # once routes are in

    def route_of(self, scope: Scope) -> str:
        if self.known is None:
            self.known = [(compile_path(p)[0], steep_path(p)) for p in route_paths(self.routes)]
        path = route_path(scope)
        return next((spelled for pattern, spelled in self.known if pattern.match(path)),
                    steep_path(path))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or \
                self.allowed.fullmatch(self.route_of(scope)):
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
        else:
            await error_response(Request(scope), 404, "Not Found")(scope, receive, send)
