"""One steepy process: controller, scheduler and local agents sharing the registry.

`steepy run` starts an engine until its submission ends; `steepy worker` until stopped.
On start the engine takes over what a dead engine left behind: RUNNING chains whose agent
stopped sending heartbeats go back to REGISTERED, and RUNNING submissions whose lease ran
out are resumed from their stored generator state.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from dataclasses import dataclass, field
from pathlib import Path

from steepy.agent import AgentConfig, LocalAgent
from steepy.agent.leftovers import end_run_leftovers
from steepy.controller import Controller
from steepy.ids import unique_id
from steepy.model.macro import Macro
from steepy.model.service import Service
from steepy.registry import Registry
from steepy.scheduler import Scheduler

log = logging.getLogger(__name__)


@dataclass
class EngineSettings:
    tmp_path: str = ".steepy/tmp"
    out_path: str = ".steepy/out"
    agents: int = 0  # 0: number of cores
    capabilities: list[str] = field(default_factory=list)
    agent: AgentConfig = field(default_factory=AgentConfig)
    heartbeat_s: float = 2.0  # how often this engine says it is alive
    lease_s: float = 10.0  # silence after which its agents and submissions are taken over
    sweep_s: float = 2.0  # safety-net polling; work normally wakes components at once


class Engine:
    def __init__(self, registry: Registry, services: dict[str, Service],
                 macros: dict[str, Macro], settings: EngineSettings | None = None):
        self.registry = registry
        self.settings = settings = settings or EngineSettings()
        self.owner = unique_id()
        count = settings.agents or os.cpu_count() or 1
        self.agents = [LocalAgent(f"{self.owner}[{i + 1}]" if i else self.owner, settings.agent,
                                  settings.capabilities, on_event=self._agent_event)
                       for i in range(count)]
        self.scheduler = Scheduler(registry, self.agents, self._chain_finished, settings.sweep_s)
        self.controller = Controller(registry, services, macros, settings.tmp_path,
                                     settings.out_path, self.scheduler.wake,
                                     self.scheduler.stop_chains, settings.sweep_s)
        self.stop = asyncio.Event()
        self._submitted = asyncio.Event()

    def _agent_event(self, kind: str, data: dict) -> None:
        self.scheduler.agent_event(kind, data)

    def _chain_finished(self, submission_id: str) -> None:
        self.controller.chain_finished(submission_id)

    def submitted(self) -> None:
        """Work appeared (e.g. a submission was stored by this process): look now."""
        self._submitted.set()

    def cancel_everything(self) -> None:
        for agent in self.agents:
            agent.cancel()

    async def _watch_database(self, interval_s: float = 0.02, busy_s: float = 0.25) -> None:
        """Notice commits of other processes (a new submission, a cancel) without waiting
        for the next sweep. While this process writes too, a change may be its own, so
        the components are woken at most every `busy_s'."""
        last = self.registry.change_marker()
        if last is None:
            return
        own = self.registry.commits
        changed = False
        woken = 0.0
        clock = asyncio.get_running_loop().time
        while not self.stop.is_set():
            await asyncio.sleep(interval_s)
            marker = self.registry.change_marker()
            surely_other = False
            if marker != last:
                changed = True
                surely_other = self.registry.commits == own  # we wrote nothing meanwhile
                last, own = marker, self.registry.commits
            if changed and (surely_other or clock() - woken >= busy_s):
                changed = False
                woken = clock()
                self._submitted.set()
                self.scheduler.wake()
                self.controller.poke()

    async def _heartbeat(self) -> None:
        rows = [{"id": a.id, "capabilities": list(a.capabilities), "chain_id": a.current_chain_id,
                 "host": socket.gethostname(), "pid": os.getpid()} for a in self.agents]
        await asyncio.to_thread(self.registry.heartbeat, self.owner, rows, self.settings.lease_s)

    async def _recover(self) -> None:
        """Release chains of dead agents (their submissions are adopted by `_accept'). Runs
        of this machine are released only once none of their processes is left, so a chain
        never runs beside a copy of itself."""
        agents = await asyncio.to_thread(self.registry.live_agents, self.settings.lease_s)
        live = [a["id"] for a in agents]
        host = socket.gethostname()
        grace_s = self.settings.agent.kill_grace_period_ms / 1000
        for run in await asyncio.to_thread(self.registry.lost_runs, live):
            if run["host"] in (host, None):
                ended = await asyncio.to_thread(end_run_leftovers, run["chainId"],
                                                run["runNumber"], grace_s)
                if ended:
                    log.warning("ended %d leftover process(es) of run %d of process chain %s",
                                ended, run["runNumber"], run["chainId"])
        released = await asyncio.to_thread(self.registry.release_orphans, live)
        if released:
            log.warning("process chains of lost agents registered again: %s", ", ".join(released))
            self.scheduler.wake()
        if not self.scheduler.busy_agents_only():
            # an agent of ours is idle: chains left REGISTERED may be waiting for an agent
            # that nobody runs; say so (every view shows it, the timeline once)
            for sid, reason, count in await asyncio.to_thread(
                    self.registry.flag_waiting_chains, [a["capabilities"] for a in agents]):
                log.warning("submission %s: %d process chain(s) %s", sid, count, reason)

    async def _accept(self) -> None:
        """Start new submissions, and take over RUNNING ones without a controller: its
        lease ran out (it died), or a retry made the submission RUNNING again. An engine of
        `steepy run` only takes its own."""
        only = self.scheduler.only_submission
        while (submission := await asyncio.to_thread(
                self.registry.fetch_next_submission, self.owner, self.settings.lease_s,
                only)) is not None:
            self.controller.start(submission)
        for submission in await asyncio.to_thread(self.registry.adopt_submissions, self.owner,
                                                  self.settings.lease_s, only):
            log.warning("resuming submission %s", submission.id)
            self.controller.start(submission)

    async def run(self, until_submission: str | None = None) -> None:
        """Work until `stop` is set; with `until_submission` (`steepy run`), on that submission
        only, until it has finished: other submissions are left to workers."""
        self.scheduler.only_submission = until_submission
        Path(self.settings.tmp_path).mkdir(parents=True, exist_ok=True)
        Path(self.settings.out_path).mkdir(parents=True, exist_ok=True)
        await self._heartbeat()
        await self._recover()
        scheduler = asyncio.create_task(self.scheduler.run(self.stop), name="scheduler")
        watcher = asyncio.create_task(self._watch_database(), name="database watcher")
        last_beat = asyncio.get_running_loop().time()
        try:
            while not self.stop.is_set():
                self._submitted.clear()
                await self._accept()
                now = asyncio.get_running_loop().time()
                if now - last_beat >= self.settings.heartbeat_s:
                    await self._heartbeat()
                    await self._recover()
                    last_beat = now
                if until_submission is not None and await self._finished(until_submission):
                    break
                waiters = [asyncio.ensure_future(self._submitted.wait()),
                           asyncio.ensure_future(self.stop.wait())]
                waiters += [asyncio.ensure_future(asyncio.shield(t))
                            for t in self.controller.tasks.values()]
                _done, pending = await asyncio.wait(waiters, timeout=self.settings.heartbeat_s,
                                                    return_when=asyncio.FIRST_COMPLETED)
                for w in pending:
                    w.cancel()
        finally:
            self.stop.set()
            self.scheduler.wake()
            await scheduler
            watcher.cancel()
            for task in list(self.controller.tasks.values()):
                task.cancel()
            await asyncio.gather(*self.controller.tasks.values(), return_exceptions=True)
            await asyncio.to_thread(self.registry.forget_agents, self.owner)

    async def _finished(self, submission_id: str) -> bool:
        submission = await asyncio.to_thread(self.registry.get_submission, submission_id)
        return submission is None or submission.status.finished
