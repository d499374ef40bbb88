"""Time as steepy sees it: one `Clock` (what time it is, how to wait) injected into every part
that waits or stamps, so tests can run them in virtual time.

`SystemClock` is the real one; `VirtualClock` is the tests' (time moves only when the test
says so). `SystemClock`'s waits never lose a cancellation: Python 3.11's
`asyncio.wait_for` can swallow an outside cancellation when the awaited event fires at the same
moment (fixed in 3.12), and a task cancelled at shutdown then runs on forever. `asyncio.timeout`
tells its own deadline from an outside cancellation, so the waits are built on it.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from datetime import datetime, timedelta, timezone
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


class VirtualClock:
    """A clock whose time moves only when the test calls `advance`: a wait or a sleep on it
    ends when the clock has been advanced past its deadline (or its event is set), never by
    itself, so an hour's retry delay passes in no wall time and a test decides exactly when.
    Everything else (threads, the database, asyncio's own timers) runs in real time.

    `now()` starts at `start` (default: the real time when the clock was made, so that times
    stored by parts on the real clock stay comparable) and moves with `monotonic()`, which
    starts at 0. Use one clock in one event loop; `advance` is called from that loop."""

    def __init__(self, start: datetime | None = None):
        self.start = start or datetime.now(timezone.utc)
        self._elapsed = 0.0
        self._order = itertools.count()  # sleepers with one deadline wake in arrival order
        self._sleepers: list[tuple[float, int, asyncio.Future]] = []  # a heap by deadline

    def now(self) -> datetime:
        return self.start + timedelta(seconds=self._elapsed)

    def monotonic(self) -> float:
        return self._elapsed

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)  # lets others run, as a real zero sleep does
            return
        timer = self._timer(seconds)
        try:
            await timer
        finally:
            timer.cancel()

    async def wait(self, event: asyncio.Event, timeout_s: float) -> bool:
        if event.is_set():
            return True
        if timeout_s <= 0:
            return False
        timer = self._timer(timeout_s)
        waiter = asyncio.ensure_future(event.wait())
        try:  # an outside cancellation raises here and is never lost
            await asyncio.wait([timer, waiter], return_when=asyncio.FIRST_COMPLETED)
        finally:
            timer.cancel()
            waiter.cancel()
        return event.is_set()

    def advance(self, seconds: float) -> int:
        """Move time on by `seconds`; every wait whose deadline is reached ends (in deadline
        order, when the loop next runs). Returns how many ended."""
        if seconds < 0:
            raise ValueError("a clock does not go back")
        self._elapsed += seconds
        woken = 0
        while self._sleepers and self._sleepers[0][0] <= self._elapsed:
            _, _, timer = heapq.heappop(self._sleepers)
            if not timer.done():
                timer.set_result(None)
                woken += 1
        return woken

    def deadlines(self) -> list[float]:
        """The deadlines (on `monotonic()`) of the waits and sleeps under way, earliest first."""
        return sorted(d for d, _, timer in self._sleepers if not timer.done())

    async def asleep_until(self, at_least: float, timeout_s: float = 10.0) -> float:
        """Wait (in real time, at most `timeout_s`) until something sleeps on this clock until
        `at_least` or later; that deadline. For a test that advances once a part has gone to
        sleep, not before."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout_s
        while not (found := [d for d in self.deadlines() if d >= at_least]):
            if loop.time() > end:
                raise TimeoutError(f"nothing slept until {at_least} s within {timeout_s} s; "
                                   f"deadlines: {self.deadlines()}")
            await asyncio.sleep(0.005)
        return found[0]

    def _timer(self, seconds: float) -> asyncio.Future:
        timer = asyncio.get_running_loop().create_future()
        if len(self._sleepers) > 1000:  # waits that ended early: forgotten
            self._sleepers = [s for s in self._sleepers if not s[2].done()]
            heapq.heapify(self._sleepers)
        heapq.heappush(self._sleepers, (self._elapsed + seconds, next(self._order), timer))
        return timer
