"""A clock for tests that must not wait: every sleep and timed wait on it ends at once and moves
its time on by what was asked, and is recorded. (steepy.model.clock.VirtualClock is the one to
use where a test decides when time moves.)"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone


class RecordingClock:
    def __init__(self, start: datetime | None = None) -> None:
        self.start = start or datetime.now(timezone.utc)
        self.elapsed = 0.0
        self.sleeps: list[float] = []  # every sleep and every wait that timed out, in seconds

    def now(self) -> datetime:
        return self.start + timedelta(seconds=self.elapsed)

    def monotonic(self) -> float:
        return self.elapsed

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.elapsed += max(seconds, 0.0)
        await asyncio.sleep(0)

    async def wait(self, event: asyncio.Event, timeout_s: float) -> bool:
        await asyncio.sleep(0)
        if not event.is_set():
            await self.sleep(timeout_s)
        return event.is_set()
