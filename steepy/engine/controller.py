"""The controller: drives one submission from RUNNING to its final status.

It runs the generator, stores new chains together with the generator state, waits for chains
to finish, feeds their outcomes back and finally decides the submission's status (reference
4.1). Everything it learns is committed before it acts, so a restarted controller resumes
from the stored state.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable

from steepy.engine.reuse import Reuse, carried
from steepy.engine.storedresults import placing
from steepy.errors import SteepyError
from steepy.generator import CHAIN_WINDOW, ProcessChainGenerator, Stop, absolute_folder
from steepy.plugins.generation import PluginGenerator
from steepy.plugins.pluginset import PluginSet, builtin_set
from steepy.model.macro import Macro
from steepy.model.service import Service
from steepy.model.stopping import stopped_at, without_marker
from steepy.model.submission import (ProcessChainStatus as CS, Submission,
                                     SubmissionStatus as SS)
from steepy.registry import ChainRecord, SubmissionStore, TakenOver
from steepy.registry.writes import RoundView, RoundWrite
from steepy.registry.offload import call
from steepy.registry.outage import outlasting
from steepy.model.clock import SYSTEM, Clock

log = logging.getLogger(__name__)

NOT_COMPLETE = ("Submission was not executed completely. There is at least one action in the "
                "workflow that has not been executed because its input was not available.")


def final_status(finished: bool, total: int, failed: int, cancelled: int,
                 cancel_requested: bool = False) -> tuple[SS, str | None]:
    """Steep's decision table (reference 4.1); a requested cancel always ends CANCELLED."""
    if cancelled or cancel_requested:
        return SS.CANCELLED, None
    if finished:
        if failed == 0:
            return SS.SUCCESS, None
        if failed == total:
            return SS.ERROR, "All process chains failed"
        return SS.PARTIAL_SUCCESS, None
    if failed == 0:
        return SS.ERROR, NOT_COMPLETE
    which = "a process chain" if failed == 1 else f"{failed} process chains"
    return SS.ERROR, f"Submission was not executed completely because {which} failed"


def submission_results(chain_results: list[dict], out_path: str) -> dict[str, list]:
    """The outputs of successful chains that lie under the output path (at any depth)."""
    def under(value: Any) -> bool:
        if isinstance(value, str):
            return value.startswith(out_path)
        if isinstance(value, list):
            return any(under(v) for v in value)
        return False

    merged: dict[str, list] = {}
    for results in chain_results:
        for var, values in results.items():
            if under(values):
                merged[var] = values
    return merged


class Controller:
    def __init__(self, store: SubmissionStore, services: dict[str, Service], macros: dict[str, Macro],
                 tmp_path: str, out_path: str, wake_scheduler: Callable[[], None],
                 stop_chains: Callable[[list[str]], None], sweep_s: float = 2.0,
                 plugins: PluginSet | None = None, clock: Clock = SYSTEM,
                 reuse: Reuse | None = None, owner: str | None = None):
        self.store = store
        self.owner = owner  # the engine's id: what it stores holds while the submission is its
        self.reuse = reuse  # extensions 15: reusable work (None: none kept)
        self.clock = clock
        self.services = services
        self.macros = macros
        self.tmp_path = absolute_folder(tmp_path)
        self.out_path = absolute_folder(out_path)
        self.wake_scheduler = wake_scheduler
        self.stop_chains = stop_chains
        self.sweep_s = sweep_s
        self.plugins = plugins if plugins is not None else builtin_set()
        self.batch_s = 0.02  # pause after a round that made new chains (others may wait)
        self.quiet_batch_s = 0.1  # after one that only took outcomes in (a fan-out draining)
        self.save_every_s = 2.0  # generator state stored at least this often while feeding
        self.chain_window = CHAIN_WINDOW  # chains in flight per submission (generator/window.py)
        self._changed: dict[str, asyncio.Event] = {}
        self.tasks: dict[str, asyncio.Task] = {}
        self.on_crash: Callable[[BaseException], None] | None = None  # a task died of a bug

    def chain_finished(self, submission_id: str) -> None:
        """Called by the scheduler: a chain of this submission has finished."""
        event = self._changed.get(submission_id)
        if event is not None:
            event.set()

    def poke(self) -> None:
        """Something changed in the database, maybe chains finished in another process:
        every submission looks again."""
        for event in self._changed.values():
            event.set()

    def start(self, submission: Submission) -> asyncio.Task | None:
        if submission.id in self.tasks:
            return None
        self._changed[submission.id] = asyncio.Event()
        task = asyncio.create_task(self._run(submission), name=f"submission {submission.id}")
        self.tasks[submission.id] = task
        task.add_done_callback(lambda t: self._forget(submission.id, t))
        return task

    def _forget(self, submission_id: str, task: asyncio.Task) -> None:
        self.tasks.pop(submission_id, None)
        self._changed.pop(submission_id, None)
        if not task.cancelled() and task.exception() is not None and self.on_crash is not None:
            self.on_crash(task.exception())

    async def _run(self, submission: Submission) -> None:
        """Drive the submission to its end. While the database fails, wait and start again
        from the stored state, as a controller that takes over after a crash does. Stop
        when another engine took it over (this one's lease ran out meanwhile)."""
        try:
            await outlasting(f"submission {submission.id}", lambda: self._run_once(submission),
                             log, clock=self.clock, then="resuming from its stored state")
        except TakenOver as e:
            log.warning("%s (this engine's heartbeats could not be written for longer than "
                        "its lease): this one stops driving it", e)

    async def _run_once(self, submission: Submission) -> None:
        try:
            status, message = await self._drive(submission)
            results = None
            if status in (SS.SUCCESS, SS.PARTIAL_SUCCESS):
                chain_results = await call(self.store.successful_results, submission.id,
                                           self.out_path)
                results = await placing(  # (what it reused and stores: in its own folder)
                    submission_results(chain_results, self.out_path),
                    self.out_path, submission.id,
                    lambda: self.store.reused_from(submission.id))
        except TakenOver:
            raise  # (nothing of it is this engine's to end)
        except SteepyError as e:
            # e.g. a cardinality error while generating: stop everything of this submission
            status, message, results = SS.ERROR, str(e), None
            running = await call(self.store.cancel_chains, submission.id)
            self.stop_chains(running)
        await call(self.store.finish_submission, submission.id, status,
                   message, results, self.owner)
        log.info("submission %s finished: %s%s", submission.id, status,
                 f" ({message})" if message else "")

    def _generator(self, submission: Submission) -> ProcessChainGenerator:
        generator = PluginGenerator(  # with the plugins that shape chains
            submission.workflow, f"{self.tmp_path}/{submission.id}",
            f"{self.out_path}/{submission.id}", self.services, self.macros, plugins=self.plugins)
        generator.default_priority = submission.priority
        generator.window = self.chain_window
        return generator

    async def _drive(self, submission: Submission) -> tuple[SS, str | None]:
        """Rounds until nothing is left to run or feed. Each round is one registry call
        (`controller_round`: store what the last round learnt, read what this one needs) and
        one generator step. New chains are stored at once; outcomes fed are stored with the
        next round (a crash in between feeds them again)."""
        store, clock = self.store, self.clock
        generator = self._generator(submission)
        state, round_number = await call(store.saved_state, submission.id)
        if state is not None:
            generator.load_state(state)
        # resuming: outcomes fed in rounds after the stored state are fed again
        after_round: int | None = round_number if state is not None else None
        event = self._changed[submission.id]
        write: RoundWrite | None = None
        first = True
        last_save = clock.monotonic()
        save_cost = 0.0  # how long storing the state took last time
        began: float | None = None
        while True:
            event.clear()
            began = clock.monotonic() if began is None else began
            calling = clock.monotonic()
            view = await call(store.controller_round, submission.id, write, after_round)
            view = carried(submission.id, write, view) if self.reuse else view  # reused
            after_round = None
            made_new = write is not None and bool(write.chains)
            if write is not None and write.save_state:
                last_save = clock.monotonic()
                save_cost = last_save - calling
            if made_new:
                self.wake_scheduler()
            if not first and view.settled:
                break
            write = None
            if first or view.finished:
                round_number += 1
                # The state must be stored with the chains it produced. Otherwise storing it
                # now and then is enough (a crash re-feeds the later rounds): it can be large
                # (a for-each over 100,000 items), so it is stored at most 5% of the time
                save_due = clock.monotonic() - last_save >= max(self.save_every_s, 20 * save_cost)
                write = await self._reused(submission, view, self._step(
                    generator, submission, view, round_number, first or save_due,
                    self.owner))
            first = False
            if write is not None and (write.chains or not view.active):
                continue  # stored now: the chains wait for it, or the submission may be over
            await self._pause(event, made_new, began)
            began = None
        counts = await call(store.chain_counts, submission.id)
        return final_status(generator.is_finished(), sum(counts.values()), counts.get(CS.ERROR, 0),
                            counts.get(CS.CANCELLED, 0),
                            await call(store.cancel_requested, submission.id))

    async def _pause(self, event: asyncio.Event, made_new: bool, began: float) -> None:
        """Between rounds (the last `began` then). A round that took long is followed by a
        longer pause, so that bookkeeping stays a bounded share of the time however many
        chains finish; a round that made nothing new can wait longer: no chain waits for
        what it learnt. The pause comes before the wait: chains finishing close together are
        handed over in one round, and the end that wakes a waiting controller is taken in at
        once (it may be the submission's last one: its status is due now)."""
        batch_s = max(self.batch_s if made_new else self.quiet_batch_s,
                      self.clock.monotonic() - began)
        await self.clock.sleep(batch_s)
        await self.clock.wait(event, self.sweep_s)

    async def _reused(self, submission: Submission, view: RoundView,
                      write: RoundWrite) -> RoundWrite:
        """`write` with the new chains that reuse earlier work, the keys of the others and
        the outputs of those that succeeded (extensions 15; steepy.engine.reuse)."""
        if self.reuse is None:
            return write
        return await call(self.reuse.scoped(submission.id).round, write, view.finished,
                          self.reuse.resumes(submission.resume))

    @staticmethod
    def _step(generator: ProcessChainGenerator, submission: Submission, view: RoundView,
              round_number: int, save: bool, owner: str | None = None) -> RoundWrite:
        """One generator step on the outcomes read (none after a cancel): what to store."""
        # the priority may have been changed (HTTP API) since the last round
        generator.default_priority = submission.priority if view.priority is None else view.priority
        new = [] if view.cancel_requested else generator.generate(*_outcomes(view.finished))
        # what stopped chains left out is recorded with the state that knows it, at once
        skipped = list(generator.take_skipped().items())
        save = save or bool(new) or bool(skipped)
        fed = [c.chain.id for c in view.finished if c.fed_round != round_number]
        return RoundWrite(round_number, fed, new, save,
                          generator.persist_state() if save else None, skipped, owner=owner)


def _outcomes(done: list[ChainRecord]) -> tuple[dict[str, list], set[str], list[Stop],
                                                list[str]]:
    """Results and executed executable ids of the successful chains among `done`, what the
    stopped ones among them left out (extensions 10, 11), and the ids of all of them."""
    results: dict[str, list] = {}
    executed: set[str] = set()
    stops: list[Stop] = []
    for record in done:
        if record.status != CS.SUCCESS:
            continue
        results.update(without_marker(record.results))
        executables = record.chain.executables
        marker = stopped_at(record.results)
        if marker is not None:
            executable_id, why, _ = marker
            start = next(i for i, e in enumerate(executables) if e.id == executable_id)
            stops.append(_stop(executables[start:], why))
            executables = executables[:start]
        executed.update(e.id for e in executables)
    return results, executed, stops, [record.chain.id for record in done]


def _stop(left_out: list, why: str) -> Stop:
    """What a chain that stopped left out: the actions of the executables `left_out` (the
    one it stopped at and those after it) and the variables they would have written."""
    rest = [e for e in left_out if e.fallback_for is None]
    return Stop(tuple(e.id for e in rest),
                tuple(a.variable.id for e in rest for a in e.arguments if a.type == "output"),
                why)
