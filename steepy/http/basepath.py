"""`http.basePath` (Steep's option): every route, page and asset lives under a prefix, for a
steepy behind a reverse proxy that forwards `https://host/steepy/...`. Requests outside the
prefix are 404; inside it, the prefix is set as the ASGI `root_path` (the `path` keeps it, as
the ASGI spec has it): routing looks at `route_path`, the pages build their links on
`root_path`."""

from __future__ import annotations

from starlette.responses import PlainTextResponse, RedirectResponse
from starlette.types import ASGIApp, Receive, Scope, Send


def normalise(base: str | None) -> str:
    """`/steepy` from `steepy`, `/steepy/` or `/steepy`; `` for none or `/`."""
    base = (base or "").strip().strip("/")
    return f"/{base}" if base else ""


class BasePath:
    def __init__(self, app: ASGIApp, base: str):
        self.app = app
        self.base = normalise(base)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.base or scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        if path == self.base and scope["type"] == "http":  # /steepy -> /steepy/
            await RedirectResponse(self.base + "/", 308)(scope, receive, send)
            return
        if not path.startswith(self.base + "/"):
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            else:
                await PlainTextResponse(f"Not found: steepy is served under {self.base}/\n",
                                        404)(scope, receive, send)
            return
        await self.app(dict(scope, root_path=self.base), receive, send)


def route_path(scope: Scope) -> str:
    """The path below the base path: what routes match (Starlette's routing does the same)."""
    path: str = scope["path"]
    root = scope.get("root_path", "")
    if root and path.startswith(root) and (len(path) == len(root) or path[len(root)] == "/"):
        path = path[len(root):]
    return path or "/"
