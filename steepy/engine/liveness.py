"""An engine's liveness: its heartbeat, its round of looking for what dead engines left
(lostruns.py, one per heartbeat), and its leases kept (fencing.py).

On PostgreSQL the heartbeat is written apart, from the engine's first moment on: a task and
a daemon thread of its own, on a connection of its own (`Connector.write(alone=True)`), so
that nothing else the engine does (a long write, a round that waits for a row another
session holds, reads that take the whole pool) holds it up while its tools run. On SQLite
the heartbeat and the round are one transaction (one writer at a time: nothing to get
ahead of)."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from functools import partial
from typing import Callable, Sequence

from steepy.agent import LocalAgent
from steepy.agent.executor import executor
from steepy.engine.fencing import LeaseKeeper
from steepy.engine.lostruns import LostRuns
from steepy.engine.scheduler import Scheduler
from steepy.engine.settings import EngineSettings
from steepy.registry import Registry
from steepy.registry.offload import call

log = logging.getLogger("steepy.engine.engine")  # (said as the engine's)


class Liveness:
    def __init__(self, registry: Registry, owner: str, settings: EngineSettings,
                 agents: Sequence[LocalAgent], scheduler: Scheduler):
        self.registry, self.owner, self.settings = registry, owner, settings
        self._agents, self._scheduler = agents, scheduler
        self._lost = LostRuns(log)  # lost runs of this machine: what is left of them
        self.keeper: LeaseKeeper | None = None  # from `start'
        self._beats: asyncio.Task | None = None  # PostgreSQL: the heartbeats' task

    @property
    def apart(self) -> bool:
        """Whether the heartbeat is written apart from the rounds (PostgreSQL)."""
        return self._beats is not None

    def judging(self, now: float) -> bool:
        """Whether this engine may count other engines' agents lost (fencing.py)."""
        return self.keeper is None or self.keeper.judging(now)

    def round_failed(self, now: float) -> None:
        """A round of the engine failed (the database): no judging for a lease."""
        if self.keeper is not None:
            self.keeper.beat_failed(now)

    async def start(self, stop: asyncio.Event,
                    on_crash: Callable[[asyncio.Task], None]) -> None:
        """Keep the leases from now; on PostgreSQL the first heartbeat (its agents are then
        registered; on SQLite the first `recover(beat=True)` does it), then the rest in their
        task (`on_crash` is told when it ends), until `stop`."""
        postgres = self.registry.db.dialect.postgres
        fences = self.settings.fence_tools
        loop = asyncio.get_running_loop()
        self.keeper = LeaseKeeper(self.settings.lease_s, self.settings.heartbeat_s,
                                  postgres if fences is None else fences, loop.time())
        if postgres:
            began = loop.time()
            await call(self._heartbeat())
            self.keeper.beat_ok(began)
            self._beats = asyncio.create_task(self.keeper.keep_beating(self._heartbeat, stop),
                                              name="heartbeats")
            self._beats.add_done_callback(on_crash)

    def watch(self, stop: asyncio.Event) -> asyncio.Task:
        """The task that stops the tools when the heartbeat lapses (fencing.py)."""
        assert self.keeper is not None
        return asyncio.create_task(self.keeper.watch(stop, self._fence), name="leases")

    async def recover(self, beat: bool = False) -> None:
        """Release chains of dead agents (their submissions are adopted by the engine's
        looks); with `beat` (SQLite), the heartbeat first (`LostRuns.round`)."""
        # this engine's executor starts beside the engine (before the first tool waits for
        # it; started again should it have died alone while nothing ran)
        executor()
        keeper, clock = self.keeper, asyncio.get_running_loop().time
        if await self._lost.round(self.registry.leases, self.owner,
                                  self._heartbeat_rows() if beat else None,
                                  self.settings.lease_s, not self._scheduler.busy_agents_only(),
                                  self.settings.agent.kill_grace_period_ms / 1000,
                                  self.judging(clock()),
                                  (lambda: keeper.beat_ok(clock())) if beat and keeper else None):
            self._scheduler.wake()

    async def stop_beating(self) -> None:
        """As the engine stops, before it forgets its agents: the beat under way ends first
        (it would write them back); one that hangs is cancelled at the server."""
        if self._beats is None:
            return
        await asyncio.wait([self._beats], timeout=self.settings.lease_s)
        if not self._beats.done():
            self.registry.db.cancel_apart()
            self._beats.cancel()

    def _heartbeat(self) -> Callable[[], None]:
        """This engine's heartbeat, to write in a thread (its agents as they are now: asked
        in the heartbeat's thread too, fencing.py)."""
        return partial(self.registry.leases.heartbeat, self.owner, self._heartbeat_rows(),
                       self.settings.lease_s)

    def _heartbeat_rows(self) -> list[dict]:
        return [{"id": a.id, "capabilities": list(a.capabilities), "chain_id": a.current_chain_id,
                 "host": socket.gethostname(), "pid": os.getpid()} for a in self._agents]

    def _fence(self, silent_s: float) -> None:
        """This engine's heartbeat could not be written for most of its lease (fencing.py)."""
        held = self._scheduler.fence(f"the heartbeat of its engine could not be written for "
                                     f"{silent_s:.0f} s")
        if held:
            log.error("engine %s: its heartbeat could not be written for %.0f s (its lease: %.0f s):"
                      " another engine may take its chains over; their tools stop and the "
                      "chains go back to the queue: %s", self.owner, silent_s,
                      self.settings.lease_s, ", ".join(held))
