"""One look for all of an engine's parts when commits wake it (issue 31).

An idle engine is woken by every commit it sees, its own heartbeat's too (every 2 s): each
part then looked for work in a thread call of its own, at the same moment, and their threads
fought for the interpreter lock (about 25 wake-ups per heartbeat). A `Looker` makes the reads
of every part in one thread call, in one round trip where it can (registry/glance.py), and
hands the answers over (`deliver`); a part acts (claims, fires) only on what its read found.
(The engine's own read takes the submissions it finds at once: `Engine._take_submissions`.)

Woken while a look is under way, it looks once more when that one is done: the read under
way may have started before the commit that woke it. Should the read fail (the database
fails), the parts are woken to look by themselves (`fallback`), each with its own outage
policy.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Callable, Generic, TypeVar

from steepy.engine.scheduler import Scheduler
from steepy.engine.timekeeper import Timekeeper
from steepy.model.submission import Submission
from steepy.registry import Registry
from steepy.registry.interfaces import Leases
from steepy.registry.failures import is_database_failure
from steepy.registry.glance import glance
from steepy.registry.offload import call

log = logging.getLogger(__name__)
L = TypeVar("L")


class Looker(Generic[L]):
    def __init__(self, reader: Callable[[], Callable[[], L]], deliver: Callable[[L], None],
                 fallback: Callable[[], None], on_crash: Callable[[BaseException], None]):
        self.reader = reader  # in the event loop: every part's read, to run in a thread
        self.deliver = deliver  # in the event loop
        self.fallback = fallback
        self.on_crash = on_crash
        self._task: asyncio.Task | None = None
        self._again = False

    def wake(self) -> None:
        """Commits happened: look (again) now."""
        if self._task is not None and not self._task.done():
            self._again = True
            return
        self._task = asyncio.create_task(self._look(), name="engine look")
        self._task.add_done_callback(self._ended)

    async def _look(self) -> None:
        again = True
        while again:
            self._again = False
            try:
                found = await call(self.reader())
            except Exception as e:
                if not is_database_failure(e):
                    raise
                log.debug("one look for every part failed (%s): each looks by itself", e)
                self.fallback()
                return
            self.deliver(found)
            again = self._again

    async def close(self) -> None:
        """Wait for a look under way (its answers may hold what it took)."""
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)

    def _ended(self, task: asyncio.Task) -> None:
        if not task.cancelled() and task.exception() is not None:
            self.on_crash(task.exception())


Taken = tuple["Submission | None", "list[Submission]"]  # what an engine took: new, adopted


def take_submissions(leases: Leases, owner: str, lease_s: float, until: str | None,
                     resume_abandoned: bool, adopting: bool = True) -> Taken:
    """(In a thread: one call where there is nothing to take.) The next new submission an
    engine starts, and those it takes over: with `until` (`steepy run`), its own only, and
    with `resume_abandoned` also those that dead engines left; none unless `adopting` (right
    after the engine's own outage, engine/fencing.py)."""
    first = leases.fetch_next_submission(owner, lease_s, until)
    if not adopting:
        return first, []
    everyone = until is not None and resume_abandoned
    try:
        return first, leases.adopt_submissions(owner, lease_s, None if everyone else until,
                                               everyone)
    except Exception:
        if first is None:
            raise
        return first, []  # taken (committed): it starts; the next look adopts


@dataclass(frozen=True)
class PartsLook:
    """What every part of an engine would read on a wake: the scheduler's outlook for its
    idle agents, the timekeeper's next fire time (None: none, or no timekeeper), the
    submissions the engine took, and the parts' counts of wakes when it was read."""

    outlook: tuple[bool, datetime | None]
    next_due: datetime | None
    taken: Taken
    wakes: tuple[int, int]

    @staticmethod
    def reader(registry: Registry, scheduler: Scheduler, timekeeper: Timekeeper | None,
               take: Callable[[], Taken]) -> Callable[[], "PartsLook"]:
        """(In the event loop.) The reads, for a thread."""
        claims = scheduler.idle_claims()
        wakes = (scheduler.wakes, timekeeper.wakes if timekeeper is not None else 0)

        def read() -> PartsLook:
            seen = glance(registry, claims, timekeeper is not None)  # (one round trip)
            if seen is None:  # (claims for some submissions only: each part reads)
                return PartsLook(registry.queue.outlook(claims),
                                 registry.schedules.next_due() if timekeeper is not None
                                 else None, take(), wakes)
            return PartsLook(seen.outlook, seen.next_due,
                             take() if seen.may_take else (None, []), wakes)
        return read

    def offer(self, scheduler: Scheduler, timekeeper: Timekeeper | None) -> None:
        """Each part gets its answer (unless something woke it meanwhile)."""
        scheduler.offer(self.outlook, self.wakes[0])
        if timekeeper is not None:
            timekeeper.offer(self.next_due, self.wakes[1])
