"""Living through a database outage: the engine's background tasks (scheduler, timekeeper,
notifier) run in rounds, and a round that fails because the database does is said and tried
again with backoff instead of ending the task."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from steepy.model.clock import wait_event
from steepy.registry.failures import MAX_BACKOFF_S, describe, is_database_failure


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
