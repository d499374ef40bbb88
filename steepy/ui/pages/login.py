"""The login form (with `http.token` set): the token goes into an HttpOnly, SameSite=Strict
cookie (steepy/ui/session.py); logging out clears it."""

from __future__ import annotations

from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from steepy.ui.render import base_path, page as render
from steepy.ui.routing import page
from steepy.ui.session import clear_cookie_header, cookie_header, matches

MAX_FORM = 64 * 1024


def _next(value: str) -> str:
    """Where to go after logging in: a path of this site only (no open redirect)."""
    if not value.startswith("/") or value.startswith("//") or "\\" in value:
        return "/"
    return value


def show(request: Request) -> Response:
    if not request.app.state.ctx.token:
        return RedirectResponse(base_path(request) + "/", 303)
    return render(request, "login.html", next=_next(request.query_params.get("next", "/")))


async def submit(request: Request) -> Response:
    ctx = request.app.state.ctx
    base = base_path(request)
    if not ctx.token:
        return RedirectResponse(base + "/", 303)
    raw = await request.body()
    form = parse_qs(raw[:MAX_FORM].decode("utf-8", "replace"))
    given = (form.get("token") or [""])[0]
    target = _next((form.get("next") or ["/"])[0])
    if not matches(given, ctx.token):
        return render(request, "login.html", 401, next=target, failed=True)
    response = RedirectResponse(base + target, 303)
    response.headers["set-cookie"] = cookie_header(ctx.token, base,
                                                   secure=request.url.scheme == "https")
    return response


def logout(request: Request) -> Response:
    base = base_path(request)
    response = RedirectResponse(base + "/login", 303)
    response.headers["set-cookie"] = clear_cookie_header(base)
    return response


ROUTES = [page("/login", show, negotiated=False),
          page("/login", submit, negotiated=False, methods=("POST",)),
          page("/logout", logout, negotiated=False, methods=("POST",))]
