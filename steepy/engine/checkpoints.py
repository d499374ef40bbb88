"""SQLite: an engine checkpoints the WAL from a thread, so that its commits never do
(`Connector.take_over_checkpoints`); elsewhere there is nothing to do.

The WAL grows only when something commits, and every commit (this process's too) moves the
database's change marker: the loop sleeps until the process's change watcher (changes.py)
says so, with no timer while nothing is written."""

from __future__ import annotations

import asyncio
import logging
import math

from steepy.engine.changes import ChangeWatcher, watcher_of
from steepy.model.clock import SYSTEM, Clock
from steepy.registry.connector import Connector
from steepy.registry.offload import call
from steepy.registry.outage import Outage

log = logging.getLogger(__name__)


async def checkpoint_until(db: Connector, stop: asyncio.Event, every_s: float = 0.5,
                           idle_s: float = 10.0, busy_commits: int = 20, clock: Clock = SYSTEM,
                           watcher: ChangeWatcher | None = None) -> None:
    """Checkpoint the WAL at most every `every_s' while this process commits (`busy_commits'
    since the last one), until `stop`. A few commits (an idle engine's heartbeat every 2 s)
    wait up to `idle_s': a checkpoint of a handful of pages is not worth a wake-up each time.
    Without commits it sleeps until `watcher` (the database's) sees one."""
    if not db.take_over_checkpoints():
        return
    woken = asyncio.Event()
    unsubscribe = (watcher or watcher_of(db)).subscribe(lambda _change: woken.set())
    stopped = asyncio.ensure_future(stop.wait())
    stopped.add_done_callback(lambda _: woken.set())
    done, done_at = -1, -math.inf
    outage = Outage("checkpoint of the database", log, level=logging.WARNING)
    try:
        while not stop.is_set():
            woken.clear()
            now, pending = clock.monotonic(), db.commits - done
            gap = every_s if pending >= busy_commits else idle_s
            if pending and now - done_at >= gap:
                done, done_at = db.commits, now
                try:
                    await call(db.checkpoint)
                    outage.over()
                except Exception as e:  # the database fails (its disk is full, ...): the WAL
                    done = -1  # keeps what commits wrote; tried again after the policy's wait
                    await clock.wait(stop, outage.wait_after(e))
                continue
            wait_s = math.inf if not pending else done_at + gap - now
            await clock.wait(woken, wait_s)
    finally:
        stopped.cancel()
        unsubscribe()
        db.hand_back_checkpoints()
