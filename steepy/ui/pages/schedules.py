"""Recurring submissions (issue 15): the list (`/schedules`), one schedule with its workflow
and latest firings (`/schedules/{id}`), the form that adds one (`/new/schedule`), and the
deliveries of notifications to webhooks (`/notifications`). Every change goes through the API
from the page (pause/resume, remove, add)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from steepy.events import kinds
from steepy.ui.paging import Listing
from steepy.ui.render import not_found
from steepy.ui.render import page as render
from steepy.ui.routing import page

LIVE_KINDS = ",".join(kinds("schedule"))
README_EXAMPLE = """notifications:
  webhooks:
    - url: https://hooks.example.org/steepy
      secret: a-long-random-string        # optional: signs every body
    - url: http://127.0.0.1:9000/failures
      events:
        - submission.status:ERROR,PARTIAL_SUCCESS
        - chain.finished:ERROR
  maxAttempts: 10    # tries before a delivery is FAILED (defaults shown)
  delay: 1s          # before the second try, doubled after each (with jitter) ...
  maxDelay: 5m       # ... up to this
  timeout: 10s       # per request
"""


def trigger_text(s: dict[str, Any]) -> str:
    if "cron" in s:
        return f"cron {s['cron']} ({s.get('timezone', 'UTC')})"
    return f"every {s.get('every', '')}"


def schedule_list(request: Request) -> Response:
    schedules = [s.to_json() for s in request.app.state.ctx.registry.schedules.list_schedules()]
    for s in schedules:
        s["trigger"] = trigger_text(s)
    return render(request, "schedules.html", schedules=schedules, live_kinds=LIVE_KINDS)


def schedule_page(request: Request) -> Response:
    registry = request.app.state.ctx.registry.schedules
    schedule_id = request.path_params["id"]
    found = registry.get_schedule(schedule_id)
    if found is None:
        return not_found(request, f"There is no schedule with ID `{schedule_id}'.")
    s = found.to_json()
    s["trigger"] = trigger_text(s)
    return render(request, "schedule.html", s=s, source=found.source or "",
                  firings=registry.firings(schedule_id), live_kinds=LIVE_KINDS)


def new_schedule(request: Request) -> Response:
    return render(request, "schedule_new.html")


def notifications(request: Request) -> Response:
    ctx = request.app.state.ctx
    q = request.query_params
    failed = q.get("failed", "").lower() in ("true", "1", "yes")
    listing = Listing.read(request, "/notifications", failed="true" if failed else None)
    items, total = ctx.registry.outbox.deliveries(failed, listing.size, listing.offset)
    listing.showing(len(items), total)
    engine = ctx.engine
    configured = (bool(engine is not None and engine.settings.notifications.subscribers)
                  or total > 0)

    filters = [("All", listing.link(failed=None, offset=None), not failed),
               ("Failed", listing.link(failed="true", offset=None), failed)]
    return render(request, "notifications.html", deliveries=items, listing=listing,
                  filters=filters, failed=failed, configured=configured,
                  example=README_EXAMPLE)


ROUTES = [page("/schedules", schedule_list),
          page("/schedules/{id}", schedule_page),
          page("/new/schedule", new_schedule, negotiated=False),
          page("/notifications", notifications)]
