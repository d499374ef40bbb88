"""What the agents report while a chain runs (its attempts' failures, retries, progress), on
its way to the registry: in the order it was reported, one write after the other, and, while
the database fails (a full disk), kept and written again after the outage policy's wait,
as the run's end and its attempts are, until the engine stops. A failed attempt is on the
timeline (extensions 6) also when the disk was full as it failed.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import Callable

from steepy.model.clock import SYSTEM, Clock
from steepy.registry.offload import persist
from steepy.registry.outage import database_failure_said

log = logging.getLogger(__name__)


class Reports:
    """The agents' reports not stored yet, and the one task that stores them."""

    def __init__(self, give_up: Callable[[], bool], clock: Clock = SYSTEM) -> None:
        self.give_up = give_up  # while the database fails, when to stop trying
        self.clock = clock
        # (the write, done when it is stored or given up); the writing thread takes from the
        # left while the event loop adds on the right (a deque does both atomically)
        self._queue: deque[tuple[Callable[[], object], asyncio.Future]] = deque()
        self._task: asyncio.Task | None = None

    def add(self, write: Callable[[], object]) -> None:
        """Store what `write()` writes after every report before it (`drain' waits for it)."""
        self._queue.append((write, asyncio.get_running_loop().create_future()))
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._store(), name="agents' reports")

    async def drain(self) -> None:
        """Wait until every report added so far is stored (or given up)."""
        if self._queue:
            await asyncio.gather(*[done for _, done in list(self._queue)],
                                 return_exceptions=True)

    async def _store(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self._queue:
                try:
                    with database_failure_said(log, "%d agent report(s) not stored: %s",
                                               len(self._queue)) as dropped:
                        await persist("storing what an agent reported", self.give_up,
                                      self._write_all, loop, clock=self.clock)
                except Exception:  # a bug: that report is said and dropped, not the rest
                    log.exception("an agent's report could not be stored")
                    if self._queue:
                        _finish(self._queue.popleft()[1])
                    continue
                if dropped.error is not None:  # the engine stops, the database still fails
                    self._give_up_all()
        except BaseException:  # cancelled
            self._give_up_all()
            raise

    def _write_all(self, loop: asyncio.AbstractEventLoop) -> None:
        """In a thread: each report in turn, taken off the queue once written (a failure
        leaves it and those after it for the next try)."""
        while self._queue:
            write, done = self._queue[0]
            write()
            self._queue.popleft()
            loop.call_soon_threadsafe(_finish, done)

    def _give_up_all(self) -> None:
        while self._queue:
            _finish(self._queue.popleft()[1])


def _finish(done: asyncio.Future) -> None:
    if not done.done():
        done.set_result(None)
