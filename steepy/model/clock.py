"""Time as steepy sees it: one `Clock` (what time it is, how to wait) injected into every part
that waits or stamps, so tests can run them in virtual time.

`SystemClock` is the real one. Its waits never lose a cancellation: Python 3.11's
`asyncio.wait_for` can swallow an outside cancellation when the awaited event fires at the same
moment (fixed in 3.12), and a task cancelled at shutdown then runs on forever. `asyncio.timeout`
tells its own deadline from an outside cancellation, so the waits are built on it.
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timezone
from typing import Protocol


class Clock(Protocol):
    """What a part of steepy needs to know of time."""

    def now(self) -> datetime:
        """The wall-clock time, aware, in UTC (every stored and reported time is)."""

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back, for measuring durations."""

    async def sleep(self, seconds: float) -> None:
        """Wait `seconds` (at least 0)."""

    async def wait(self, event: asyncio.Event, timeout_s: float) -> bool:
        """Wait until `event` is set or `timeout_s` has passed; True if it was set."""


class SystemClock:
    """The machine's clock and asyncio's timers."""

    def now(self) -> datetime:
        return datetime.now(timezone.utc)

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(seconds, 0))

    async def wait(self, event: asyncio.Event, timeout_s: float) -> bool:
        return await wait_event(event, timeout_s)


SYSTEM = SystemClock()


async def wait_event(event: asyncio.Event, timeout_s: float) -> bool:
    """Wait until `event` is set or `timeout_s` has passed; True if it was set."""
    try:
        async with asyncio.timeout(max(timeout_s, 0)):
            await event.wait()
    except TimeoutError:
        return event.is_set()
    return True
