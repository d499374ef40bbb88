"""steepy's web UI in front of the API, on the API's own paths where Steep has pages.

A browser that asks for a page (its `Accept` prefers text/html, Steep's rule) of `/workflows`,
`/workflows/{id}`, `/processchains`... gets the page; a client that asks for JSON gets the
API as before. Paths only the UI has (`/login`, `/new/workflow`, the timeline, `/ui/static`)
are pages whatever the client accepts. Every page module lists its `ROUTES`; this module
only dispatches. Pages read through the registry's `ReadViews` (`request.app.state.ctx`);
everything that changes state goes through the API from the pages' script, so the UI adds no
second way to cancel, retry or submit.
"""

from __future__ import annotations

from pathlib import Path

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import BaseRoute, Match, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from steepy.ui.negotiation import prefers_html
from steepy.ui.render import not_found
from steepy.ui.pages import (agents, chains, editor, graph, login, logs, overview, plugins,
                             schedules, search, services, timeline, workflows)

STATIC = Path(__file__).parent / "static"
STATIC_PREFIX = "/ui/static/"
YEAR_S = 365 * 24 * 3600


class _Static(StaticFiles):
    """The package's CSS, script and icons; cached for a year, since their URLs carry the
    version (`?v=`)."""

    async def get_response(self, path, scope):
        try:
            response = await super().get_response(path, scope)
        except HTTPException as e:  # (outside the app's handlers: a 500 and a traceback)
            return PlainTextResponse(f"{e.detail}\n", status_code=e.status_code)
        if response.status_code == 200:
            response.headers["cache-control"] = f"public, max-age={YEAR_S}"
        return response


class UiSite:
    """ASGI middleware: pages for browsers, the API for everyone else."""

    def __init__(self, app: ASGIApp):
        self.app = app
        self.routes: list[BaseRoute] = []
        for module in (overview, workflows, chains, logs, agents, services, plugins, editor,
                       timeline, graph, login, schedules, search):
            self.routes.extend(module.ROUTES)
        self.static = _Static(directory=STATIC)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            route = self.match(scope)
            if route is not None:
                await route.handle(scope, receive, send)
                return
            if self._below(scope, STATIC_PREFIX):
                root = scope.get("root_path", "")
                await self.static(dict(scope, root_path=root + STATIC_PREFIX.rstrip("/")),
                                  receive, send)
                return
            if self._nowhere(scope):  # a mistyped address in a browser: the UI's 404 page
                request = Request(scope, receive)
                await not_found(request, f"There is no page at `{request.url.path}'.")(
                    scope, receive, send)
                return
        await self.app(scope, receive, send)

    @staticmethod
    def _nowhere(scope: Scope) -> bool:
        """A browser's GET of a path neither the UI nor the API has (the API would answer
        a bare `Not Found')."""
        if scope["method"] not in ("GET", "HEAD"):
            return False
        accept = dict(scope["headers"]).get(b"accept", b"").decode("latin-1")
        app = scope.get("app")
        routes = getattr(getattr(app, "router", None), "routes", None)
        if routes is None or not prefers_html(accept):
            return False
        return all(route.matches(scope)[0] is Match.NONE for route in routes)

    @staticmethod
    def _below(scope: Scope, prefix: str) -> bool:
        return scope["path"].startswith(scope.get("root_path", "").rstrip("/") + prefix)

    def match(self, scope: Scope) -> Route | None:
        """The page route for this request, if it is one."""
        for route in self.routes:
            found, child = route.matches(scope)
            if found is Match.NONE:
                continue
            if route.negotiated:  # type: ignore[attr-defined]
                accept = dict(scope["headers"]).get(b"accept", b"").decode("latin-1")
                if scope["method"] not in ("GET", "HEAD") or not prefers_html(accept):
                    continue
            elif found is Match.PARTIAL:  # right path, other method: the API may have it
                continue
            scope.update(child)
            return route
        return None
