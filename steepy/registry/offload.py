"""Registry calls from asynchronous code: the interfaces block (SQLAlchemy and its drivers
do), so the event loop hands each call to a worker thread here, typed like the call itself;
`persist` also waits out a database that cannot be used."""

from __future__ import annotations

import asyncio
import logging
from typing import Callable, ParamSpec, TypeVar

from steepy.registry.failures import MAX_BACKOFF_S, describe, is_database_failure

log = logging.getLogger(__name__)
P = ParamSpec("P")
T = TypeVar("T")


async def call(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """`fn(*args, **kwargs)` in a worker thread."""
    return await asyncio.to_thread(fn, *args, **kwargs)


async def persist(what: str, give_up: Callable[[], bool], fn: Callable[P, T],
                  *args: P.args, **kwargs: P.kwargs) -> T:
    """Like `call`; while the database fails, say so (`what` failed), wait (1 s, 2 s, ... up
    to 30 s) and try again, until `give_up()` is true."""
    delay = 1.0
    while True:
        try:
            return await call(fn, *args, **kwargs)
        except Exception as e:
            if not is_database_failure(e) or give_up():
                raise
            log.error("%s: %s; trying again in %.0f s", what, describe(e), delay)
        await asyncio.sleep(delay)
        delay = min(delay * 2, MAX_BACKOFF_S)
