"""Rendering pages: one Jinja2 environment for the package's templates, the filters every page
uses (times, durations, statuses), and `page()`, which gives each template what the layout
needs (base path, CSRF token, version, whether a login is in use)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse

from steepy import __version__
from steepy.model.durations import format_duration

NO_STORE = {"cache-control": "no-store"}  # pages show live data: never from a cache
ENV = Environment(loader=PackageLoader("steepy.ui", "templates"),
                  autoescape=select_autoescape(default=True, default_for_string=True),
                  trim_blocks=True, lstrip_blocks=True)


def parse_time(value: Any) -> datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    try:
        found = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return found if found.tzinfo else found.replace(tzinfo=timezone.utc)


def iso(value: Any) -> str:
    found = parse_time(value)
    return "" if found is None else found.isoformat().replace("+00:00", "Z")


def when(value: Any) -> str:
    """A time as people read it (UTC, to the second); pages turn it into local time."""
    found = parse_time(value)
    return "" if found is None else found.strftime("%Y-%m-%d %H:%M:%S UTC")


def elapsed(start: Any, end: Any = None) -> str:
    """How long from `start` to `end` (or until now), like `1m 5s`."""
    begin = parse_time(start)
    if begin is None:
        return ""
    finish = parse_time(end) or datetime.now(timezone.utc)
    ms = max(0, int((finish - begin).total_seconds() * 1000))
    return format_duration(ms - ms % 1000 if ms >= 1000 else ms)


def status_class(status: Any) -> str:
    return "status-" + str(status or "unknown").lower().replace("_", "-")


def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


ENV.filters.update(iso=iso, when=when, status_class=status_class, pretty_json=pretty_json,
                   duration=lambda ms: "" if ms is None else format_duration(int(ms)))
ENV.globals.update(elapsed=elapsed, version=__version__)


def base_path(request: Request) -> str:
    return request.scope.get("root_path", "").rstrip("/")


def page(request: Request, template: str, status: int = 200, **values: Any) -> HTMLResponse:
    """A whole page: `template` with `values`, inside the layout."""
    state = request.scope.get("state", {})
    ctx = request.app.state.ctx
    # logged in: the session cookie let this request in (auth.py then hands pages the CSRF
    # token); not on the login page, nor for a client sending the token in a header
    body = ENV.get_template(template).render(
        base=base_path(request), csrf=state.get("csrf", ""),
        login=bool(ctx.token and state.get("csrf")),
        path=request.url.path, query=request.query_params, **values)
    return HTMLResponse(body, status, headers=NO_STORE)


def not_found(request: Request, what: str) -> HTMLResponse:
    return page(request, "not_found.html", 404, what=what)
