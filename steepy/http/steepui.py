"""Serving a build of Steep's own web UI (`http.steepUi: PATH`) as Steep serves it.

A browser that asks for one of Steep's pages (its `Accept` prefers text/html) gets the page
of the build; a client that prefers JSON gets the API as before. `/_next/*` and `/favicons/*`
are the build's static files. In every text file the magic strings `/$$MYBASEPATH$$` and
`/$$MYBASEURL$$` become the base path; pages are never cached, the other files for a year.
steepy ships no copy of Steep's UI: this is for users who have one.
"""

from __future__ import annotations

import mimetypes
import re
from pathlib import Path
from typing import Any

from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from steepy.ui.negotiation import prefers_html

_ID = r"[^/]+"
# Steep's page routes (HttpEndpoint.kt) and the page of the build each one renders
PAGES = [(re.compile(f"^{pattern}/?$"), page) for pattern, page in [
    ("", "index.html"),
    ("/agents", "agents/index.html"),
    (f"/agents/{_ID}", "agents/[id].html/index.html"),
    (f"/logs/processchains/{_ID}", "logs/processchains/[id].html/index.html"),
    ("/search", "search/index.html"),
    ("/services", "services/index.html"),
    (f"/services/{_ID}", "services/[id].html/index.html"),
    ("/plugins", "plugins/index.html"),
    (f"/plugins/{_ID}", "plugins/[name].html/index.html"),
    ("/processchains", "processchains/index.html"),
    (f"/processchains/{_ID}", "processchains/[id].html/index.html"),
    (f"/processchains/{_ID}/runs/{_ID}", "processchains/[id].html/runs/[runNumber].html/index.html"),
    ("/vms", "vms/index.html"),
    (f"/vms/{_ID}", "vms/[id].html/index.html"),
    ("/workflows", "workflows/index.html"),
    (f"/workflows/{_ID}", "workflows/[id].html/index.html"),
]]
NEW_WORKFLOW = re.compile(r"^/new/workflow/?$")  # a page whatever the client accepts
NEW = re.compile(r"^/new/?$")  # redirected to /new/workflow
RUNS = re.compile(f"^/processchains/{_ID}/runs/?$")  # a browser goes to the chain's page
STATIC = re.compile(r"^/(_next|favicons)/")
YEAR_S = 60 * 60 * 24 * 365


class SteepUi:
    """ASGI middleware in front of the API."""

    def __init__(self, app: ASGIApp, root: Path):
        self.app = app
        self.root = Path(root).resolve()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        response = self.answer(scope)
        if response is None:
            await self.app(scope, receive, send)
        else:
            await response(scope, receive, send)

    def answer(self, scope: Scope) -> Response | None:
        base = scope.get("root_path", "").rstrip("/")
        path = scope["path"]
        if base and path.startswith(base):
            path = path[len(base):]
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope.get("headers", [])}
        if STATIC.match(path):
            return self.asset(path.lstrip("/"), base, favicons=path.startswith("/favicons/"))
        if NEW_WORKFLOW.match(path):
            return self.asset("new/workflow/index.html", base)
        if NEW.match(path):
            return Response(status_code=301, headers={"location": f"{base}/new/workflow"})
        if not prefers_html(headers.get("accept", "")):
            return None
        if RUNS.match(path):
            query = scope.get("query_string", b"").decode("latin-1")
            location = base + path.rstrip("/").removesuffix("/runs") + (f"?{query}" if query else "")
            return Response(status_code=301, headers={"location": location})
        if path.startswith("/logs/") and b"forceDownload=true" in scope.get("query_string", b""):
            return None
        for pattern, page in PAGES:
            if pattern.match(path):
                return self.asset(page, base)
        return None

    def asset(self, name: str, base: str, favicons: bool = False) -> Response:
        """A file of the build with the base path put in; 404 if there is none."""
        file = (self.root / name).resolve()
        if not file.is_relative_to(self.root) or not file.is_file():
            return Response(status_code=404)
        media = mimetypes.guess_type(file.name)[0]
        body: Any = file.read_bytes()
        if media is None or not media.startswith("image/"):
            text = body.decode("utf-8", errors="surrogateescape")
            text = text.replace("/$$MYBASEPATH$$", base).replace("/$$MYBASEURL$$", base)
            if favicons:
                text = text.replace('"/favicons/', f'"{base}/favicons/')
            body = text.encode("utf-8", errors="surrogateescape")
        headers = ({"cache-control": "no-cache, no-store, must-revalidate", "expires": "0"}
                   if media == "text/html" else {"cache-control": f"public, max-age={YEAR_S}"})
        return Response(body, media_type=media, headers=headers)
