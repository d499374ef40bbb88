"""A submission's timeline as server-sent events, for live views: every event as it is
committed, then `event: end` once the submission has finished."""

from __future__ import annotations

import asyncio
import json
from typing import AsyncIterator

from starlette.responses import StreamingResponse

from steepy.http.context import ApiContext
from steepy.model.submission import FINISHED_SUBMISSION
from steepy.registry.offload import call
from steepy.waiting import wait_event

KEEPALIVE_S = 15.0  # a comment line now and then keeps proxies from closing an idle stream


def _message(event: dict) -> str:
    return f"id: {event['id']}\ndata: {json.dumps(event, separators=(',', ':'))}\n\n"


async def _events(ctx: ApiContext, submission_id: str, after: int) -> AsyncIterator[str]:
    loop = asyncio.get_running_loop()
    quiet_since = loop.time()
    yield "retry: 1000\n\n"
    while True:
        found = await call(ctx.views.events, submission_id, after)
        for event in found:
            after = event["id"]
            yield _message(event)
        status = await call(ctx.views.submission_status, submission_id)
        if status is None or status in FINISHED_SUBMISSION:
            # events committed between the read above and the status: send them too
            for event in await call(ctx.views.events, submission_id, after):
                yield _message(event)
            yield f"event: end\ndata: {json.dumps(status)}\n\n"
            return
        if found:
            quiet_since = loop.time()
        elif loop.time() - quiet_since >= KEEPALIVE_S:
            quiet_since = loop.time()
            yield ": keep-alive\n\n"
        if await wait_event(ctx.stopping, ctx.stream_poll_s):
            return  # the server is shutting down


def event_stream(ctx: ApiContext, submission_id: str, after: int) -> StreamingResponse:
    return StreamingResponse(_events(ctx, submission_id, after), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
