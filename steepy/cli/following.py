"""Following a submission while it runs (`steepy run`'s timeline, piped or live): a round every
so often until the engine has ended, and a last one then, through database outages. Without
rich: a piped `steepy run` needs none of the live view."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from steepy.model.clock import wait_event
from steepy.registry.outage import Outage

log = logging.getLogger(__name__)


async def following(name: str, one_round: Callable[[bool], Awaitable[None]],
                    stop: asyncio.Event, interval_s: float) -> None:
    """`await one_round(False)` every `interval_s` until `stop` is set, then
    `one_round(True)` once, the last round. A round the database fails is said in one line
    (`NAME: WHAT; looking again in N s`, registry/outage.py) and done again after the
    outage's wait: a view goes on from where it stopped."""
    outage = Outage(name, log, then="looking again")
    while True:
        final = stop.is_set()
        try:
            await one_round(final)
        except Exception as e:  # anything but the database failing: raised
            wait_s = outage.wait_after(e)
        else:
            if final:
                return
            outage.over()
            wait_s = interval_s
        if final:  # the engine has ended: the database is back, or soon will be
            await asyncio.sleep(wait_s)
        else:
            await wait_event(stop, wait_s)
