"""A trailing slash is optional, as in Steep, whose routes are declared `/workflows/?`,
`/workflows/:id/?`, `/processchains/:id/runs/?`...: `PUT /workflows/ID/` changes the
submission, where Starlette would answer 307 to the path without the slash (and a client
that does not follow a redirect, `curl -X PUT` without `-L`, would change nothing). The
request is routed as if the slash were not there: to the API, the pages and the static
files alike (none of them lists a folder)."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from steepy.http.basepath import route_path


class OptionalSlash:
    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            below = route_path(scope)
            if len(below) > 1 and below.endswith("/"):
                path = scope["path"].rstrip("/") or "/"
                raw = scope.get("raw_path")
                scope = dict(scope, path=path)
                if raw is not None:
                    scope["raw_path"] = raw.rstrip(b"/") or b"/"
        await self.app(scope, receive, send)
