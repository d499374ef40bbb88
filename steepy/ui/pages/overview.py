"""The overview (`/`): what this steepy is, what runs, what failed lately."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from steepy.events import EventKind as K, kinds
from steepy.model.submission import SubmissionStatus
from steepy.ui.render import page as render
from steepy.ui.routing import page

SUBMISSION_ORDER = ["ACCEPTED", "RUNNING", "SUCCESS", "PARTIAL_SUCCESS", "ERROR", "CANCELLED"]
CHAIN_ORDER = ["REGISTERED", "PAUSED", "RUNNING", "SUCCESS", "ERROR", "CANCELLED"]
RECENT = 5
LIVE_KINDS = ",".join([*kinds("submission", "agent"), K.CHAIN_STARTED, K.CHAIN_FINISHED,
                       K.CHAIN_REGISTERED])


def _ordered(counts: dict[str, int], order: list[str]) -> list[tuple[str, int]]:
    known = [(s, counts.get(s, 0)) for s in order]
    return known + sorted((s, n) for s, n in counts.items() if s not in order)


def overview(request: Request) -> Response:
    ctx = request.app.state.ctx
    counts = ctx.views.metrics(ctx.agent_max_age_s)
    failed, _ = ctx.views.submission_summaries(str(SubmissionStatus.ERROR), RECENT, 0)
    partial, _ = ctx.views.submission_summaries(str(SubmissionStatus.PARTIAL_SUCCESS), RECENT, 0)
    recent_failures = sorted(failed + partial, key=lambda s: s.get("endTime") or "",
                             reverse=True)[:RECENT]
    latest, total = ctx.views.submission_summaries(None, RECENT, 0)
    return render(request, "overview.html",
                  submissions=_ordered(counts["submissions"], SUBMISSION_ORDER),
                  chains=_ordered(counts["chains"], CHAIN_ORDER),
                  agents=counts["agents"], busy=counts["busy_agents"],
                  failures=recent_failures, latest=latest, total=total,
                  engine=ctx.engine is not None, live_kinds=LIVE_KINDS)


ROUTES = [page("/", overview)]
