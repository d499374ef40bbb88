"""Steep's content negotiation for its GET routes: each declares the types it produces
(Vert.x's `produces`), and a client whose `Accept` takes none of them gets 406 Not Acceptable
before anything is read. `GET /workflows` with `Accept: image/png` is refused; `*/*`,
`text/*`, a browser's Accept and no Accept at all are taken.

Which of JSON and a page is answered is decided elsewhere (steepy.ui.negotiation.prefers_html);
PUT routes check for JSON themselves (steepy.http.updates.require_json). `/new/workflow` is a
page whatever the client accepts, and steepy's own routes (`/events`, `/schedules`, ...)
negotiate nothing.
"""

from __future__ import annotations

import re

from starlette.types import ASGIApp, Receive, Scope, Send

from steepy.http.errors import error_response
from steepy.ui.negotiation import accepts

JSON, HTML, TEXT = "application/json", "text/html", "text/plain"
_ID = r"[^/]+"
# Steep's GET routes (HttpEndpoint.kt) and what each produces
PRODUCES = [(re.compile(f"^{pattern}/?$"), types) for pattern, types in [
    ("", (JSON, HTML)),
    ("/agents", (JSON, HTML)),
    (f"/agents/{_ID}", (JSON, HTML)),
    ("/health", (JSON,)),
    (f"/logs/processchains/{_ID}", (TEXT, HTML)),
    ("/search", (JSON, HTML)),
    ("/services", (JSON, HTML)),
    (f"/services/{_ID}", (JSON, HTML)),
    ("/setups", (JSON,)),
    (f"/setups/{_ID}", (JSON,)),
    ("/plugins", (JSON, HTML)),
    (f"/plugins/{_ID}", (JSON, HTML)),
    ("/processchains", (JSON, HTML)),
    (f"/processchains/{_ID}", (JSON, HTML)),
    (f"/processchains/{_ID}/runs", (JSON, HTML)),
    (f"/processchains/{_ID}/runs/{_ID}", (JSON, HTML)),
    ("/vms", (JSON, HTML)),
    (f"/vms/{_ID}", (JSON, HTML)),
    ("/workflows", (JSON, HTML)),
    (f"/workflows/{_ID}", (JSON, HTML)),
]]


def produced(path: str) -> tuple[str, ...] | None:
    """What Steep's GET route at `path` (below the base path) produces; None for no such
    route."""
    for pattern, types in PRODUCES:
        if pattern.match(path):
            return types
    return None


class Negotiation:
    """ASGI middleware in front of the pages and routes."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET" and not self._taken(scope):
            await error_response(None, 406, "Not Acceptable")(scope, receive, send)
            return
        await self.app(scope, receive, send)

    @staticmethod
    def _taken(scope: Scope) -> bool:
        base = scope.get("root_path", "").rstrip("/")
        path: str = scope["path"]
        if base and path.startswith(base):
            path = path[len(base):]
        types = produced(path)
        if types is None:
            return True
        accept = ",".join(v.decode("latin-1") for k, v in scope.get("headers", [])
                          if k.lower() == b"accept")
        return any(accepts(accept, media) for media in types)
