"""SQLite: an engine checkpoints the WAL from a thread, so that its commits never do
(`Connector.take_over_checkpoints`); elsewhere there is nothing to do."""

from __future__ import annotations

import asyncio
import logging
import time

from steepy.model.clock import wait_event
from steepy.registry.connector import Connector
from steepy.registry.offload import call
from steepy.registry.outage import Outage

log = logging.getLogger(__name__)


async def checkpoint_until(db: Connector, stop: asyncio.Event, every_s: float = 0.5,
                           idle_s: float = 10.0, busy_commits: int = 20) -> None:
    """Checkpoint the WAL at most every `every_s' while this process commits, until `stop`.
    An idle engine's few commits (a heartbeat every 2 s) wait up to `idle_s': a checkpoint
    of a handful of pages is not worth a wake-up each time."""
    if not db.take_over_checkpoints():
        return
    done, done_at = -1, 0.0
    outage = Outage("checkpoint of the database", log, level=logging.WARNING)
    try:
        while not stop.is_set():
            wait_s = every_s
            now = time.monotonic()
            if db.commits - done >= busy_commits \
                    or (db.commits != done and now - done_at >= idle_s):
                done, done_at = db.commits, now
                try:
                    await call(db.checkpoint)
                    outage.over()
                except Exception as e:  # the database fails (its disk is full, ...):
                    wait_s, done = outage.wait_after(e), -1  # the WAL keeps what commits wrote
            await wait_event(stop, wait_s)
    finally:
        db.hand_back_checkpoints()
