"""Registry calls from asynchronous code: the interfaces block (SQLAlchemy and its drivers
do), so the event loop hands each call to a worker thread here, typed like the call itself;
`persist` also waits out a database that cannot be used."""

from __future__ import annotations

import asyncio
import logging
from typing import Callable, ParamSpec, TypeVar

from steepy.model.clock import SYSTEM, Clock
from steepy.registry.outage import outlasting

log = logging.getLogger(__name__)
P = ParamSpec("P")
T = TypeVar("T")


async def call(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """`fn(*args, **kwargs)` in a worker thread."""
    return await asyncio.to_thread(fn, *args, **kwargs)


async def persist(what: str, give_up: Callable[[], bool], fn: Callable[P, T],
                  *args: P.args, clock: Clock = SYSTEM, **kwargs: P.kwargs) -> T:
    """Like `call`; while the database fails, say so (`what` failed), wait on `clock` (1 s,
    2 s, ... up to 30 s) and try again, until `give_up()` is true (registry/outage.py)."""
    return await outlasting(what, lambda: call(fn, *args, **kwargs), log, clock=clock,
                            give_up=give_up)
