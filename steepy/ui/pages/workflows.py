"""The workflow pages, on the API's own paths for browsers:

- `/workflows`: submissions, newest first, with a status filter (`?status=`), paging
  (`?size=&offset=`) and Steep's search (`?q=`), updated live;
- `/workflows/{id}`: one submission: facts, progress, results, error, its process chains by
  status, its timeline, its source, and the actions that apply (cancel, retry, priority,
  resubmit), which call the API from the page.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from steepy.events import EventKind as K, kinds
from steepy.model.submission import (ACTIVE_SUBMISSION, RETRYABLE_SUBMISSION,
                                     ProcessChainStatus, SubmissionStatus)
from steepy.ui.pages.workflows_events import timeline
from steepy.ui.pages.workflows_search import search_submissions, zone
from steepy.ui.paging import DEFAULT_SIZE, Listing
from steepy.ui.render import not_found, page as render
from steepy.ui.routing import page

STATUSES = ["ACCEPTED", "RUNNING", "SUCCESS", "PARTIAL_SUCCESS", "ERROR", "CANCELLED"]
# REUSED: the SUCCESS chains that reused earlier work (extensions 15), a group of their own
CHAIN_GROUPS = ["RUNNING", "REGISTERED", "PAUSED", "ERROR", "CANCELLED", "SUCCESS", "REUSED"]
MAX_SIZE = 500  # a workflow list may show larger pages than the others
CHAIN_LIMIT = 200  # chains listed on a submission's page (the newest)
# events that change what the list shows: statuses and chain counters
LIST_KINDS = ",".join([*kinds("submission"), K.CHAIN_REGISTERED, K.CHAIN_STARTED,
                       K.CHAIN_FINISHED, K.CHAIN_REQUEUED, K.CHAIN_RESUMED,
                       K.CHAIN_CANCEL_REQUESTED, K.CHAIN_REUSED])


def _done(s: dict) -> int:
    return s["succeededProcessChains"] + s["failedProcessChains"] + s["cancelledProcessChains"]


def workflow_list(request: Request) -> Response:
    ctx = request.app.state.ctx
    params = request.query_params
    q = params.get("q", "").strip()
    status = params.get("status") or None
    error = None
    if status is not None and status not in STATUSES:
        error = f"status: `{status}' is not a status of a submission; expected one of " \
                f"{', '.join(STATUSES)}"
        status = None
    listing = Listing.read(request, "/workflows", MAX_SIZE, q=q, status=status,
                           tz=params.get("tz"))
    size, offset = listing.size, listing.offset
    if q:  # the filters count what the search finds
        found = search_submissions(ctx.registry.search, ctx.views, q, status, size, offset,
                                   zone(params.get("tz")))
        items, total, error = found.items, found.total, error or found.error
        counts = found.counts
    else:
        items, total = ctx.views.submission_summaries(status, size, offset)
        counts = ctx.views.submission_counts()
    return render(request, "workflows.html", 400 if error else 200, items=items,
                  listing=listing.showing(len(items), total), selected=status, q=q,
                  error=error, statuses=STATUSES, counts=counts, all_count=sum(counts.values()),
                  done=_done, live_kinds=LIST_KINDS, default_size=DEFAULT_SIZE)


def _chains(ctx: Any, submission_id: str) -> tuple[list[tuple[str, list[dict]]], int]:
    """The newest chains of a submission grouped by status (in CHAIN_GROUPS' order), each
    with the services its executables run; and how many chains it has in all."""
    summaries, total = ctx.views.chain_summaries(submission_id, None, CHAIN_LIMIT, 0)
    records, _ = ctx.views.list_chains(submission_id, None, CHAIN_LIMIT, 0)
    services = {r.chain.id: [e.service_id for e in r.chain.executables] for r in records}
    reused = {r.chain.id: r.reused for r in records if r.reused}
    groups: dict[str, list[dict]] = {}
    for chain in summaries:
        chain["services"] = services.get(chain["id"], [])
        chain["reused"] = reused.get(chain["id"])
        groups.setdefault("REUSED" if chain["reused"] else chain["status"], []).append(chain)
    order = CHAIN_GROUPS + sorted(set(groups) - set(CHAIN_GROUPS))
    return [(s, groups[s]) for s in order if s in groups], total


def _progress(doc: dict, counts: dict[str, int]) -> list[tuple[str, int]]:
    return [("succeeded", doc["succeededProcessChains"]), ("failed", doc["failedProcessChains"]),
            ("cancelled", doc["cancelledProcessChains"]), ("running", doc["runningProcessChains"]),
            ("paused", doc["pausedProcessChains"]),
            ("registered", counts.get(str(ProcessChainStatus.REGISTERED), 0))]


def workflow(request: Request) -> Response:
    ctx = request.app.state.ctx
    submission_id = request.path_params["id"]
    doc = ctx.views.submission(submission_id)
    if doc is None:
        return not_found(request, f"There is no workflow with ID `{submission_id}'.")
    counts = ctx.views.chain_counts(submission_id)
    groups, chain_total = _chains(ctx, submission_id)
    lines, left_out = timeline(ctx.views.events(submission_id))
    waiting = Counter(c["waiting"] for _, chains in groups for c in chains if c.get("waiting"))
    status = doc["status"]
    return render(request, "workflow.html", s=doc, groups=groups, chain_total=chain_total,
                  chain_limit=CHAIN_LIMIT, progress=_progress(doc, counts), lines=lines,
                  left_out=left_out, waiting=sorted(waiting.items()),
                  active=status in {str(x) for x in ACTIVE_SUBMISSION},
                  retryable=status in {str(x) for x in RETRYABLE_SUBMISSION},
                  done=_done(doc))


ROUTES = [page("/workflows", workflow_list), page("/workflows/{id}", workflow)]

assert set(STATUSES) == {str(s) for s in SubmissionStatus}
