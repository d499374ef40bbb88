"""A process chain's log (`/logs/processchains/{id}`, `?runNumber=`; default the latest run).

The page shows the last part of the log, read on the server (so it is readable without
JavaScript); its script loads earlier ranges on demand and tails the log while the run goes
on, asking the API on the same path with `x-range` (which answers 200 and `x-content-range`).
Downloads (`?forceDownload=`) and ranged requests are never the page's: they go to the API.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match, Route
from starlette.types import Scope

from steepy.agent.logsource import find_log
from steepy.events import EventKind as K
from steepy.model.submission import FINISHED_CHAIN
from steepy.ui.render import not_found
from steepy.ui.render import page as render
from steepy.ui.routing import page

TAIL_BYTES = 64 * 1024  # what the page shows first: the last ~64 KB
LIVE_KINDS = ",".join([K.CHAIN_STARTED, K.CHAIN_FINISHED, K.CHAIN_REQUEUED, K.CHAIN_RESUMED,
                       K.CHAIN_CANCEL_REQUESTED])


@dataclass
class LogTail:
    text: str
    start: int  # the byte offset of the first byte shown
    end: int  # the byte offset after the last byte shown
    size: int  # the log's size when read


def read_tail(log, max_bytes: int = TAIL_BYTES) -> LogTail:
    """The last whole lines of a log, up to `max_bytes`: starts after a line break (unless
    that would leave nothing) and ends before an incomplete UTF-8 character (a tool may be
    writing it)."""
    size = log.size
    start = max(0, size - max_bytes)
    data = b"".join(log.chunks(start, size - start))
    if start > 0:
        cut = data.find(b"\n")
        if 0 <= cut < len(data) - 1:
            data, start = data[cut + 1:], start + cut + 1
        else:  # one long line: start at a character boundary
            skip = next((i for i, b in enumerate(data[:4]) if b & 0xC0 != 0x80), 0)
            data, start = data[skip:], start + skip
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    text = decoder.decode(data, final=False)
    pending = len(decoder.getstate()[0])
    return LogTail(text, start, start + len(data) - pending, size)


def log_page(request: Request) -> Response:
    ctx = request.app.state.ctx
    chain_id = request.path_params["id"]
    found = ctx.views.chain_status(chain_id)
    if found is None:
        return not_found(request, f"There is no process chain with ID `{chain_id}'.")
    status, submission_id = found
    runs = ctx.views.runs(chain_id)
    numbers = [r.run_number for r in runs]
    wanted = request.query_params.get("runNumber")
    if wanted not in (None, ""):
        try:
            run_number: int | None = int(wanted)
        except ValueError:
            run_number = None
        if run_number not in numbers:
            return not_found(request, f"Process chain `{chain_id}' has no run {wanted}.")
    else:
        run_number = numbers[-1] if numbers else None
    run = next((r for r in runs if r.run_number == run_number), None)
    tail, message = None, None
    if run is None:
        message = ("This process chain has not run yet; its log appears when it starts."
                   if status not in FINISHED_CHAIN else
                   f"This process chain is {status} and never ran, so it has no log.")
    else:
        log = find_log(ctx.log_dir, ctx.log_group_by_prefix, ctx.registry.logs, chain_id,
                       run.run_number)
        if log is None:
            # the file is made with the first line a run prints
            message = ("This run has printed nothing yet." if run.end_time is None else
                       "This run printed nothing, so it has no log (or it ran on another "
                       "machine without a shared log store).")
        else:
            tail = read_tail(log)
            if tail.size == 0:
                message = "The log is empty so far." if run.end_time is None else "The log is empty."
    running = run is not None and run.end_time is None and run_number == numbers[-1]
    waiting = run is None and status not in FINISHED_CHAIN
    return render(request, "log.html", chain_id=chain_id,
                  chain_status=status if run is None or run_number == numbers[-1]
                  else (run.status or status),
                  submission_id=submission_id, runs=runs, run=run, run_number=run_number,
                  tail=tail, message=message, running=running, waiting=waiting,
                  live_kinds=LIVE_KINDS)


class _LogRoute(Route):
    """The page, but never for a download or a ranged request: those are the API's."""

    def matches(self, scope: Scope):
        if scope["type"] == "http":
            query = scope.get("query_string", b"")
            headers = dict(scope.get("headers", []))
            if (b"forcedownload" in query.lower() or b"range" in headers
                    or b"x-range" in headers):
                return Match.NONE, {}
        return super().matches(scope)


def _route(path: str) -> Route:
    route = page(path, log_page)
    found = _LogRoute(path, log_page, methods=["GET"])
    found.negotiated = route.negotiated  # type: ignore[attr-defined]
    return found


ROUTES = [_route("/logs/processchains/{id}")]
