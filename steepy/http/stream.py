"""Server-sent events over the live feed (steepy/engine/feed.py): `GET /events`, the whole timeline
or one submission's, and a submission's stream, which ends with `event: end` once the
submission has finished. Every event is sent as `id: <event id>` and `data: <event JSON>`;
a reconnecting client's `Last-Event-ID` resumes after the last event it saw."""

from __future__ import annotations

import json
from typing import AsyncIterator

from fastapi import APIRouter, Query, Request
from sse_starlette.event import ServerSentEvent
from sse_starlette.sse import EventSourceResponse

from steepy.engine.feed import FeedFailed, Subscription
from steepy.events import EventKind
from steepy.http.context import ApiContext
from steepy.http.responses import context
from steepy.model.submission import FINISHED_SUBMISSION
from steepy.registry.offload import call

KEEPALIVE_S = 15.0  # a comment now and then keeps proxies from closing an idle stream
WAKE_S = 0.5  # how often a quiet stream looks whether the server is stopping
SEP = "\n"  # lines end in LF, as they did before sse-starlette (CRLF is valid too)
HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def resume_after(request: Request, after: int | None) -> int | None:
    """Where a stream starts: after the client's `Last-Event-ID` or `after`, whichever is
    later (None: from now)."""
    last = request.headers.get("last-event-id", "")
    if last.isdigit() and len(last) < 19:
        return int(last) if after is None else max(after, int(last))
    return after


def _encode(event: dict) -> bytes:
    return ServerSentEvent(data=json.dumps(event, separators=(",", ":")), id=str(event["id"]),
                           sep=SEP).encode()


def _finished(events: list[dict]) -> bool:
    return any(e["kind"] == EventKind.SUBMISSION_STATUS and e.get("status") in FINISHED_SUBMISSION
               for e in events)


async def _follow(ctx: ApiContext, subscription: Subscription,
                  until_finished: bool) -> AsyncIterator[ServerSentEvent]:
    yield ServerSentEvent(retry=1000, sep=SEP)
    submission_id = subscription.submission_id
    look = until_finished  # whether the submission's status must be read
    try:
        while not ctx.stopping.is_set():
            found = await subscription.next_batch(WAKE_S)
            if found:  # one write per batch, each event encoded once for every client
                yield ctx.feed.encoded(found, _encode)
            if until_finished and (look or _finished(found)):
                status = await call(ctx.views.submission_status, submission_id)
                look = False
                if status is None or status in FINISHED_SUBMISSION:
                    # events committed before the status was read: send them too
                    while found := await subscription.next_batch(0):
                        yield ctx.feed.encoded(found, _encode)
                    yield ServerSentEvent(data=json.dumps(status), event="end", sep=SEP)
                    return
    except FeedFailed:
        return  # (the feed said why, once); the client connects again and gets a new one
    finally:
        subscription.close()


async def event_stream(ctx: ApiContext, after: int | None, submission_id: str | None = None,
                       until_finished: bool = False) -> EventSourceResponse:
    subscription = await ctx.feed.subscribe(after, submission_id, ctx.stopping)
    return EventSourceResponse(_follow(ctx, subscription, until_finished and bool(submission_id)),
                               headers=HEADERS, ping=KEEPALIVE_S, sep=SEP)


router = APIRouter(tags=["steepy"])


@router.get("/events", summary="The live timeline of every submission, as server-sent events",
            responses={200: {"description": "text/event-stream: one `message` per event",
                             "content": {"text/event-stream": {}}}})
async def all_events(request: Request,
                     submissionId: str | None = Query(None, description="Only this submission's"),
                     after: int | None = Query(None, ge=0, le=2**62,
                                               description="Events after this id (default: "
                                                           "from now on)")) -> EventSourceResponse:
    """Every event as it is committed, of every process sharing the database: submissions
    and their chains (each event has `submissionId`), agents arriving and leaving. A
    reconnecting client's `Last-Event-ID` resumes after the last event it saw."""
    return await event_stream(context(request), resume_after(request, after), submissionId)
