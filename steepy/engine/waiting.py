"""Waiting for an event with a time limit, without ever losing a cancellation.

Python 3.11's `asyncio.wait_for` can swallow an outside cancellation when the awaited event
fires at the same moment (fixed in 3.12): a task cancelled at shutdown then runs on forever.
`asyncio.timeout` tells its own deadline from an outside cancellation, so this is built on it.

`in_rounds` is the loop of the engine's background tasks (scheduler, timekeeper, notifier):
a round, then sleep until woken or the round's own deadline; a failing database is said and
waited out with backoff instead of ending the task.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from steepy.registry.failures import MAX_BACKOFF_S, describe, is_database_failure


async def wait_event(event: asyncio.Event, timeout_s: float) -> bool:
    """Wait until `event` is set or `timeout_s` has passed; True if it was set."""
    try:
        async with asyncio.timeout(max(timeout_s, 0)):
            await event.wait()
    except TimeoutError:
        return event.is_set()
    return True


async def in_rounds(name: str, one_round: Callable[[], Awaitable[float]], wake: asyncio.Event,
                    stop: asyncio.Event, log: logging.Logger) -> None:
    """Run `one_round` until `stop` is set; each returns how many seconds to sleep, and
    `wake` ends a sleep early. A database failure is logged (`name: what; trying again in
    N s`) and the round repeated after 1 s, doubling up to MAX_BACKOFF_S; anything else ends
    the loop with that exception."""
    backoff = 1.0
    while not stop.is_set():
        wake.clear()
        try:
            wait_s = await one_round()
            backoff = 1.0
        except Exception as e:
            if not is_database_failure(e):
                raise
            log.error("%s: %s; trying again in %.0f s", name, describe(e), backoff)
            wait_s, backoff = backoff, min(backoff * 2, MAX_BACKOFF_S)
        if stop.is_set():
            break
        await wait_event(wake, wait_s)
