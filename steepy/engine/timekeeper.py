"""An engine's time-based work: it fires the schedules that are due (extensions 13) and runs
the garbage collector on its cron (reference 12). Every engine runs one; the registry's
claims make sure each due time is acted on by exactly one of them.

It sleeps until the earliest next fire time (or the regular lookup, whichever is first), and
wakes at once when told that schedules changed (a commit of another process, an API call)."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from typing import Callable

from steepy.engine.housekeeping import GC_TIMER, GcSettings, collect_garbage
from steepy.engine.offers import Offered
from steepy.model.clock import SYSTEM, Clock
from steepy.registry import Registry
from steepy.registry.offload import call
from steepy.model.triggers import quartz_cron
from steepy.registry.outage import database_failure_said, in_rounds

log = logging.getLogger(__name__)
LATE_S = 0.002  # wake this much after a due time, so that it is due when looked at


class Timekeeper:
    def __init__(self, registry: Registry, owner: str, grace_s: float, lookup_s: float,
                 on_fired: Callable[[], None], gc: GcSettings | None = None,
                 clock: Clock = SYSTEM):
        self.registry = registry
        self.clock = clock
        self.owner = owner
        self.grace_s = grace_s
        self.lookup_s = lookup_s
        self.on_fired = on_fired  # new submissions were stored: the engine should look now
        self.gc = gc
        self._gc_trigger = quartz_cron(gc.cron) if gc is not None else None
        self._gc_task: asyncio.Task | None = None
        self._wake = asyncio.Event()
        self._offered: Offered[datetime | None] = Offered()  # `offer'

    @property
    def wakes(self) -> int:
        return self._offered.wakes

    def wake(self) -> None:
        """Schedules may have changed: look again now."""
        self._offered.void()  # what the engine read before is stale
        self._wake.set()

    def offer(self, next_due: datetime | None, wakes: int) -> None:
        """The engine read the next fire time (`Schedules.next_due`) just now, after the
        commits that woke it, when `wakes` was this timekeeper's count of them: unless it
        was woken since, the next tick uses it instead of a read of its own."""
        self._offered.put(next_due, wakes)
        self._wake.set()

    async def run(self, stop: asyncio.Event) -> None:
        try:  # the engine cancels this task to stop
            await in_rounds("schedules", self._tick, self._wake, stop, log, self.clock)
        finally:
            if self._gc_task is not None:
                self._gc_task.cancel()

    async def _tick(self) -> float:
        """Fire what is due; how long to sleep until something may be due again."""
        schedules, offered = self.registry.schedules, self._offered.take()
        if offered is not None and (offered[0] is None or offered[0] > self.clock.now()):
            fired, next_due = [], offered[0]  # nothing due: no read of its own
        else:
            fired, next_due = await call(self._fire_due, self.clock.now())
        if fired:
            log.info("schedules fired: %s", ", ".join(fired))
            self.on_fired()
        times: list[datetime | None] = [next_due]
        if self._gc_task is not None and self._gc_task.done() and not self._gc_task.cancelled():
            error = self._gc_task.exception()
            self._gc_task = None
            if error is not None:
                raise error  # a bug: the engine stops (database failures were said already)
        if self._gc_trigger is not None and (self._gc_task is None or self._gc_task.done()):
            due = await call(schedules.claim_timer, GC_TIMER, self._gc_trigger, self.owner,
                             self.clock.now())
            if due is not None:
                self._gc_task = asyncio.create_task(self._collect(), name="garbage collector")
            times.append(await call(schedules.timer_due, GC_TIMER))
        now = self.clock.now()
        wait_s = self.lookup_s
        for when in times:
            if when is not None:
                wait_s = min(wait_s, max(0.0, (when - now).total_seconds()) + LATE_S)
        return wait_s

    def _fire_due(self, now: datetime) -> tuple[list[str], datetime | None]:
        """In one thread call: fire what is due (the ids of its new submissions), and the
        next fire time. When nothing is due, that is one read."""
        schedules = self.registry.schedules
        next_due = schedules.next_due()
        if next_due is None or next_due > now:
            return [], next_due
        return schedules.fire_due(self.grace_s, now), schedules.next_due()

    async def _collect(self) -> None:
        assert self.gc is not None
        # the next firing tries again
        with database_failure_said(log, "garbage collector: %s; it runs again at its next time"):
            report = await call(collect_garbage, self.registry, self.gc, self.clock.now())
            log.info("garbage collector: %s", report.summary())
