"""One steepy process: controller, scheduler and local agents sharing the registry.

`steepy run` starts an engine until its submission ends; `steepy worker` until stopped.
On start the engine takes over what a dead engine left behind: RUNNING chains whose agent
stopped sending heartbeats go back to REGISTERED, and RUNNING submissions whose lease ran
out are resumed from their stored generator state.

The engine's face, all its callers (the CLI, the HTTP API, the plugins) may use; its parts
(agents, scheduler, controller, timekeeper, notifier, liveness) are its own:

- `Engine(registry, services, macros, settings, clock, kind)`, then `await
  run(until_submission)`: work until `stop` is set (with `until_submission`: that submission
  only, until it ends; `resume_abandoned` adds the RUNNING ones that engines of kind "run"
  left, dead or stopped, until they end too).
- `resumed`, `on_resumed(id)`, `finish_resumed`: what `resume_abandoned` took over, each said
  as it is; cleared, the engine does not wait for them (it gives them back when it stops).
- `ready`: the event set once its agents are registered (GET /agents lists them) and it
  takes work.
- `stop`: the event that stops it; `failure`: why it stopped by itself (None: it did not);
  `crash(error)`: a task the caller runs for it died of a bug: it stops, saying why.
- `changed(what)`: something changed in the database that this process knows of (a
  `Changed`: "submissions" stored or retried, "chains" cancelled, retried or reprioritised,
  "schedules" added, paused or removed; "anything" for all): whoever cares looks now.
  Commits of other processes need no call: the process's change watcher (changes.py) wakes
  the engine. Call it in the engine's event loop.
- `idle`: no submission is being driven and no chain runs here.
- `recover()`: one round of taking over what dead engines left (`run` does one per heartbeat).
- `owner` (its id), `agent_count`, `plugins` (its agents' plugin set), `settings`.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
from pathlib import Path
from typing import Callable, Literal

from steepy.agent import LocalAgent
from steepy.agent.environment import hide_this_process
from steepy.model.attempt import AttemptRecord
from steepy.engine.changes import Change, watcher_of
from steepy.engine.checkpoints import checkpoint_until
from steepy.engine.controller import Controller
from steepy.engine.intake import Intake
from steepy.engine.looks import Looker, PartsLook
from steepy.engine.liveness import Liveness
from steepy.engine.reuse import Reuse
from steepy.engine.settings import EngineSettings
from steepy.model.ids import unique_id
from steepy.model.macro import Macro
from steepy.model.service import Service
from steepy.model.submission import SubmissionStatus
from steepy.notifications.delivery import Notifier
from steepy.registry import Registry
from steepy.registry.identity import older_copy
from steepy.registry.leases import RUN_OWNER
from steepy.registry.offload import call, persist
from steepy.registry.outage import Outage, database_failure_said
from steepy.registry.recoveries import Recoveries
from steepy.engine.scheduler import Scheduler
from steepy.engine.timekeeper import Timekeeper
from steepy.events import EventKind
from steepy.model.clock import SYSTEM, Clock
from steepy.plugins.pluginset import PluginSet

log = logging.getLogger(__name__)

Changed = Literal["submissions", "chains", "schedules", "anything"]
BUSY_WAKE_S = 0.25  # a busy engine is woken by commits that may be its own at most this often


class Engine:
    def __init__(self, registry: Registry, services: dict[str, Service],
                 macros: dict[str, Macro], settings: EngineSettings | None = None,
                 clock: Clock = SYSTEM, kind: Literal["worker", "run"] = "worker"):
        self.registry = registry
        self.settings = settings = settings or EngineSettings()
        # a `steepy run`'s engine says so in its id: what it leaves, another run may resume
        self.owner = (RUN_OWNER if kind == "run" else "") + unique_id()
        count = settings.agents or os.cpu_count() or 1
        shared = settings.logs_in_database
        if shared is None:
            shared = registry.db.dialect.postgres
        self._recoveries = Recoveries(registry.db)
        self._agents = [LocalAgent(f"{self.owner}[{i + 1}]" if i else self.owner, settings.agent,
                                  settings.capabilities, on_event=self._agent_event,
                                  log_sink=registry.logs if shared else None,
                                  store_attempt=self._store_attempt, clock=clock,
                                  claim_recovery=self._claim_recovery)
                       for i in range(count)]
        # the scheduler and the timekeeper wait for a wake-up or a due time only: the engine
        # sweeps for them (`_sweep'), so an idle engine wakes once per heartbeat, not per part
        self._scheduler = Scheduler(registry.queue, self._agents, self._chain_finished,
                                    math.inf, clock)
        self._controller = Controller(registry.submissions, services, macros, settings.tmp_path,
                                      settings.out_path, self._scheduler.wake,
                                      self._scheduler.stop_chains, settings.sweep_s,
                                      settings.agent.plugins, clock,
                                      Reuse(registry.cache, services, settings.cache,
                                            settings.out_path),
                                      self.owner)
        self._timekeeper = Timekeeper(registry, self.owner, settings.schedule_grace_s,
                                      math.inf, self._submitted_here, settings.gc, clock)
        self._notifier = Notifier(registry.outbox, self.owner, settings.notifications, clock)
        self.stop = asyncio.Event()
        self._submitted = asyncio.Event()
        self.ready = asyncio.Event()  # its agents are registered: it can take work
        self._woken = 0.0  # when commits last woke the parts (the loop's time)
        self._wake_later: asyncio.TimerHandle | None = None
        self.failure: BaseException | None = None  # why the engine stopped by itself
        self.on_resumed: Callable[[str], None] = lambda submission_id: None
        self.finish_resumed = True
        self._liveness = Liveness(registry, self.owner, settings, self._agents, self._scheduler)
        self._intake = Intake(registry.leases, self.owner, settings.lease_s, self._controller,
                              self._scheduler, self._liveness,
                              lambda submission_id: self.on_resumed(submission_id))
        self.resumed = self._intake.resumed  # (the same list: what it took over)
        # commits wake every part through one look (looks.py), in one thread call
        self._looker = Looker(lambda: PartsLook.reader(
            registry, self._scheduler, self._timekeeper if self._timekeeping else None,
            self._intake.take), self._looked, lambda: self.changed("anything"), self.crash)
        self._timekeeping = False  # the timekeeper runs (workers and servers)
        self._scheduler.on_crash = self._controller.on_crash = self.crash

    # -- the face ------------------------------------------------------------------------------

    def changed(self, what: Changed = "anything") -> None:
        """Something changed in the database (this process knows): whoever cares looks now."""
        if what in ("submissions", "anything"):
            self._submitted.set()
        if what in ("chains", "anything"):
            self._scheduler.wake()
            self._controller.poke()
        if what in ("schedules", "anything"):
            self._timekeeper.wake()
        if what == "anything":
            self._notifier.wake()

    @property
    def idle(self) -> bool:
        """No submission is being driven and no chain runs here."""
        return not self._controller.tasks and not self._scheduler.busy

    @property
    def agent_count(self) -> int:
        return len(self._agents)

    @property
    def plugins(self) -> PluginSet:
        """The plugins this engine's agents and controllers use."""
        return self.settings.agent.plugins

    def crash(self, error: BaseException) -> None:
        """A task of this engine died of a bug: stop the whole engine, so that its leases
        end and other engines take its work over, instead of living on without it."""
        if self.failure is None:
            self.failure = older_copy(self.registry.db, error) or error  # a backup put back
            if self.failure is error:
                log.critical("steepy failed, stopping this engine: %s", error, exc_info=error)
            else:
                log.error("%s", self.failure)  # (not a bug: no traceback)
        self.stop.set()

    def _agent_event(self, kind: EventKind, data: dict) -> None:
        self._scheduler.agent_event(kind, data)

    async def _store_attempt(self, chain_id: str, run_number: int, record: AttemptRecord,
                             durable: bool) -> None:
        await self._scheduler.store_attempt(chain_id, run_number, record, durable)

    async def _claim_recovery(self, submission_id: str, chain_id: str, run_number: int,
                              first: AttemptRecord) -> bool:
        """Whether the workflow's catch may run (its maxRecoveries: registry/recoveries.py);
        while the database fails, the catch waits (until the engine stops)."""
        return await persist("claiming a run of the workflow's catch", self.stop.is_set,
                             self._recoveries.claim, submission_id, chain_id, run_number,
                             first, clock=self._scheduler.clock)

    def _chain_finished(self, submission_id: str) -> None:
        self._controller.chain_finished(submission_id)

    def _submitted_here(self) -> None:
        self.changed("submissions")

    def _on_commit(self, change: Change) -> None:
        """The process's change watcher saw a commit (changes.py): wake the parts. An idle
        engine looks at once (its own heartbeat may have hidden a submission), and so does
        one that wrote nothing meanwhile; a busy one's change may be its own (whose parts it
        woke already), so it is woken at most every BUSY_WAKE_S."""
        if not change.known or self.stop.is_set():
            return  # without a marker the sweeps look
        now = asyncio.get_running_loop().time()
        if change.surely_other or self.idle or now - self._woken >= BUSY_WAKE_S:
            self._wake_for_commits()
        elif self._wake_later is None:
            self._wake_later = asyncio.get_running_loop().call_at(
                self._woken + BUSY_WAKE_S, self._wake_for_commits)

    def _sweep(self) -> None:
        """The safety-net look (every `sweep_s', and after each heartbeat): every part looks
        for work now. The change watcher reads the database's marker first, so a commit of
        another process mixed up with this engine's own (its heartbeat) is seen by this look
        or the watcher's next one, and the heartbeat's commit wakes nobody again."""
        began = asyncio.get_running_loop().time()
        watcher_of(self.registry.db).look_now()  # it may wake the parts itself
        if self._woken < began:
            self._wake_for_commits()

    def _wake_for_commits(self) -> None:
        if self._wake_later is not None:
            self._wake_later.cancel()
            self._wake_later = None
        self._woken = asyncio.get_running_loop().time()
        self._controller.poke()
        self._notifier.wake()
        self._looker.wake()

    def _looked(self, look: PartsLook) -> None:
        look.offer(self._scheduler, self._timekeeper if self._timekeeping else None)
        if look.taken[0] is not None or look.taken[1]:
            self._intake.taken.append(look.taken)
            self._submitted.set()

    async def recover(self, beat: bool = False) -> None:
        """Release chains of dead agents (their submissions are adopted by the intake); with
        `beat` (SQLite), the heartbeat first (liveness.py)."""
        await self._liveness.recover(beat)

    async def run(self, until_submission: str | None = None,
                  resume_abandoned: bool = False) -> None:
        """Work until `stop` is set; with `until_submission` (`steepy run`), on that submission
        only, until it has finished: other submissions are left to workers. With
        `resume_abandoned` as well, RUNNING submissions whose engine died (its lease ran out)
        are taken over too, and run until they have finished as well."""
        self._intake.until, self._intake.resume_abandoned = until_submission, resume_abandoned
        self._scheduler.only_submissions = (None if until_submission is None
                                            else frozenset({until_submission}))
        hide_this_process()  # before anything runs beside it (a tool, a software setup)
        Path(self.settings.tmp_path).mkdir(parents=True, exist_ok=True)
        Path(self.settings.out_path).mkdir(parents=True, exist_ok=True)
        await self.settings.agent.plugins.initialize()  # initializer plugins, once
        await self._liveness.start(self.stop, self._supervise)  # PostgreSQL: it beats
        try:
            await self.recover(beat=not self._liveness.apart)
        except BaseException:
            self.stop.set()  # (the heartbeats end)
            raise
        self.ready.set()
        finishing, cancelled = self._start_parts(timekeeper=until_submission is None)
        cancelled.append(self._liveness.watch(self.stop))
        # before anything looks for work: every commit from here on wakes the engine
        unsubscribe = watcher_of(self.registry.db).subscribe(self._on_commit, self.crash)
        last_beat = asyncio.get_running_loop().time()
        outage = Outage(f"engine {self.owner}", log)
        self._submitted.set()  # the first round looks for submissions
        try:
            while not self.stop.is_set():
                failed = False
                try:
                    last_beat = await self._beat(last_beat)
                    if self._submitted.is_set():  # (a look found some, or one was stored)
                        self._submitted.clear()
                        await self._intake.accept()
                    if until_submission is not None and await self._all_finished():
                        await self._notifier.flush()  # its notification, if it can go now
                        break
                    outage.over()
                    wait_s = self._until_due_s(last_beat)
                except Exception as e:  # the database fails: keep going, say so, back off
                    self._liveness.round_failed(asyncio.get_running_loop().time())
                    # (but heartbeat on time: its leases must hold while it can write them)
                    wait_s = outage.wait_after(e, at_most_s=self.settings.heartbeat_s)
                    failed = True
                await self._pause(wait_s, woken=not failed)
                if failed:  # after the back-off: look for submissions again
                    self._submitted.set()
        except Exception as e:  # a bug in the engine's own loop
            self.crash(e)
        finally:
            unsubscribe()
            await self._wind_down(finishing, cancelled)

    async def _pause(self, wait_s: float, woken: bool) -> None:
        """Sleep `wait_s` or until stopped; if `woken`, also until a submission is stored or
        a controller ends (after a failure: the back-off, whatever else happens)."""
        waiters = [asyncio.ensure_future(self.stop.wait())]
        if woken:
            waiters.append(asyncio.ensure_future(self._submitted.wait()))
            waiters += [asyncio.ensure_future(asyncio.shield(t))
                        for t in self._controller.tasks.values()]
        _done, pending = await asyncio.wait(waiters, timeout=wait_s,
                                            return_when=asyncio.FIRST_COMPLETED)
        for w in pending:
            w.cancel()

    async def _beat(self, last_beat: float) -> float:
        """The heartbeat and the look for lost agents when due (`heartbeat_s' after the last,
        which is returned), then the sweep unless the parts looked since the heartbeat
        committed; else the sweep when due (`sweep_s' after the parts last looked)."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        if now - last_beat >= self.settings.heartbeat_s:
            await self.recover(beat=not self._liveness.apart)  # (commits after `now')
            if self._woken < now:
                self._sweep()
            return now
        if now - self._woken >= self.settings.sweep_s:
            self._sweep()
        return last_beat

    def _until_due_s(self, last_beat: float) -> float:
        """How long the engine may sleep: until its next heartbeat or sweep."""
        due = min(last_beat + self.settings.heartbeat_s, self._woken + self.settings.sweep_s)
        return max(0.0, due - asyncio.get_running_loop().time())

    async def _wind_down(self, finishing: list[asyncio.Task],
                         cancelled: list[asyncio.Task]) -> None:
        """The parts stop; our agents are gone and our leases end now: others take over at
        once."""
        if self._wake_later is not None:
            self._wake_later.cancel()
        self.stop.set()
        self._scheduler.wake()
        self._notifier.wake()
        await self._looker.close()  # (what it took and did not start: its lease ends below)
        await asyncio.gather(*finishing, return_exceptions=True)
        for task in cancelled:
            task.cancel()
        await self._cancel_controllers()
        await self._liveness.stop_beating()  # (a beat under way would write them back)
        with database_failure_said(log, "engine %s: %s; its leases end by themselves",
                                   self.owner):
            await call(self.registry.leases.forget_agents, self.owner)

    def _start_parts(self, timekeeper: bool) -> tuple[list[asyncio.Task], list[asyncio.Task]]:
        """The parts' tasks: those that end by themselves on `stop`, those cancelled then."""
        finishing = [asyncio.create_task(self._scheduler.run(self.stop), name="scheduler"),
                     asyncio.create_task(self._notifier.run(self.stop), name="notifier"),
                     asyncio.create_task(checkpoint_until(self.registry.db, self.stop),
                                         name="checkpoints")]
        cancelled: list[asyncio.Task] = []
        self._timekeeping = timekeeper
        if timekeeper:  # schedules and the collector: workers and servers only
            cancelled.append(asyncio.create_task(self._timekeeper.run(self.stop),
                                                 name="timekeeper"))
        for task in finishing + cancelled:
            task.add_done_callback(self._supervise)
        return finishing, cancelled

    async def _cancel_controllers(self) -> None:
        """Cancel the submissions' controllers and wait until they are gone; a cancellation
        that a task swallowed (a library's bug, or a task's) is sent again."""
        while tasks := [t for t in self._controller.tasks.values() if not t.done()]:
            for task in tasks:
                task.cancel()
            await asyncio.wait(tasks, timeout=1.0)

    def _supervise(self, task: asyncio.Task) -> None:
        if not task.cancelled() and task.exception() is not None:
            self.crash(task.exception())

    async def _all_finished(self) -> bool:
        """`steepy run`'s submission has finished, and those it resumed (`finish_resumed`)."""
        waited_for = [self._intake.until, *(self.resumed if self.finish_resumed else [])]
        return all([await self._finished(str(sid)) for sid in waited_for])

    async def _finished(self, submission_id: str) -> bool:
        status = await call(self.registry.views.submission_status, submission_id)
        return status is None or SubmissionStatus(status).finished
