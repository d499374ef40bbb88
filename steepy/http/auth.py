"""Who may do what.

- `BearerAuth`: with a token configured, every request but `GET /health`, the login page and
  the UI's static files must carry `Authorization: Bearer <token>`, or the session cookie of
  the login form; a state-changing request that relies on the cookie must also carry the
  page's CSRF token (steepy/ui/session.py). A browser asking for a page without either is
  sent to the login form.
- `SameOrigin`: no state-changing request from another site's page, token or not (without a
  token, a page on any site could otherwise submit workflows, that is, run commands, to a
  steepy listening on the visitor's loopback address). Browsers say where a request comes
  from (`Sec-Fetch-Site`, `Origin`); clients like curl say nothing and are not affected.
"""

from __future__ import annotations

from urllib.parse import quote, urlsplit

from starlette.requests import Request
from starlette.responses import RedirectResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from steepy.http.basepath import route_path
from steepy.http.errors import error_response
from steepy.ui.negotiation import prefers_html
from steepy.ui.session import CSRF_HEADER, SAFE_METHODS, cookie_value, csrf_token, matches

OPEN = {("GET", "/health"), ("HEAD", "/health"), ("GET", "/login"), ("HEAD", "/login"),
        ("POST", "/login"), ("POST", "/logout")}
OPEN_PREFIXES = ("/ui/static/",)  # the UI's stylesheet, script and icons hold no data


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}


class BearerAuth:
    def __init__(self, app: ASGIApp, token: str | None):
        self.app = app
        self.token = token
        self.expected = f"Bearer {token}" if token else ""
        self.csrf = csrf_token(token) if token else ""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.token is None or scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        method = scope.get("method", "GET")
        path = route_path(scope)
        if (method, path) in OPEN or path.startswith(OPEN_PREFIXES):
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        given = headers.get("authorization", "")
        if matches(given, self.expected):
            await self.app(scope, receive, send)
            return
        if matches(cookie_value(headers.get("cookie", "")), self.token):
            if method in SAFE_METHODS or matches(headers.get(CSRF_HEADER), self.csrf):
                scope.setdefault("state", {})["csrf"] = self.csrf  # pages send it back
                await self.app(scope, receive, send)
                return
            response = error_response(Request(scope), 403, "Missing or invalid CSRF token "
                                      f"(header {CSRF_HEADER}); reload the page")
            await response(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        request = Request(scope)
        if method in ("GET", "HEAD") and prefers_html(headers.get("accept", "")):
            base = scope.get("root_path", "")
            target = quote(path + (f"?{scope['query_string'].decode('latin-1')}"
                                   if scope.get("query_string") else ""), safe="")
            await RedirectResponse(f"{base}/login?next={target}", 303)(scope, receive, send)
            return
        message = "Missing bearer token" if not given else "Invalid bearer token"
        response = error_response(request, 401, message,
                                  headers={"WWW-Authenticate": 'Bearer realm="steepy"'})
        await response(scope, receive, send)


def cross_site(headers: dict[str, str]) -> bool:
    """Whether a browser says this request comes from another site's page. Browsers of the
    last years send `Sec-Fetch-Site`, which sees through reverse proxies; older ones only
    `Origin`, compared with the host the request was sent to (a proxy's forwarded host
    first)."""
    site = headers.get("sec-fetch-site")
    if site is not None:
        return site in ("cross-site", "same-site")
    origin = headers.get("origin")
    if not origin:
        return False  # not from a page: curl, Steep's clients, steepy's CLI
    if origin == "null":
        return True  # sandboxed frames and data: pages
    host = headers.get("x-forwarded-host") or headers.get("host", "")
    return urlsplit(origin).netloc.lower() != host.split(",")[0].strip().lower()


class SameOrigin:
    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (scope["type"] == "http" and scope["method"] not in SAFE_METHODS
                and cross_site(_headers(scope))):
            response = error_response(Request(scope), 403, "Cross-site request refused: "
                                      "state-changing requests must come from steepy's own "
                                      "pages or from a client that is not a browser")
            await response(scope, receive, send)
            return
        if (scope["type"] == "websocket" and cross_site(_headers(scope))
                and _headers(scope).get("origin")):
            await send({"type": "websocket.close", "code": 1008})  # no reading from elsewhere
            return
        await self.app(scope, receive, send)
