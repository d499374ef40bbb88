"""The scheduler: hands REGISTERED chains to free local agents and records how runs end.

Process-chain retries (reference 6, `retries.processChains`) live here: a failed run with
attempts left pauses the chain until a durable wake-up time, after which it is registered
again, also after a restart.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from datetime import datetime
from typing import Any, Callable, Coroutine

from steepy.agent.cancel import Cancelled
from steepy.agent.interface import Agent
from steepy.agent.config import FAILED, REQUEUED, TIMEOUT, AttemptRecord, ChainOutcome
from steepy.events import EventKind
from steepy.model.chainretry import Action, RetryDecision, RunFailure, decide
from steepy.model.clock import SYSTEM, Clock
from steepy.model.submission import ProcessChainStatus as CS
from steepy.model.timeouts import TimeoutKind
from steepy.engine.offers import Offered
from steepy.engine.groupcommit import GroupCommit
from steepy.engine.reports import Reports
from steepy.registry import ChainQueue, ChainRecord, ClaimFor, RunEnd
from steepy.registry.writes import Claimed
from steepy.registry.offload import call, persist
from steepy.registry.outage import database_failure_said, in_rounds

log = logging.getLogger(__name__)
PROGRESS_EVERY_S = 1.0  # a chain's estimated progress is stored at most this often
AHEAD_BELOW_S = 0.5  # after a chain that ran shorter than this, its agent claims ahead


def after_run(record: ChainRecord, run_number: int, outcome: ChainOutcome,
              now: datetime) -> RetryDecision:
    """What becomes of the chain after this run (steepy/model/chainretry.py decides; runs a
    `requeue' took back do not count as attempts)."""
    return decide(record.chain.retries, run_number - record.requeued_runs, outcome.status,
                  failure_of(outcome), now)


def log_end(record: ChainRecord, run_number: int, outcome: ChainOutcome,
            decision: RetryDecision, took_s: float) -> None:
    """One INFO line: how a run ended, and whether the chain is tried again."""
    chain_id = record.chain.id
    log.info("chain %s ended %s after %.1fs, run %d", chain_id, outcome.status, took_s,
             run_number)
    if decision.action is Action.RETRY:
        retries = record.chain.retries
        log.info("chain %s retried in %.1fs: attempt %d of %s", chain_id,
                 decision.delay_ms / 1000, run_number - record.requeued_runs + 1,
                 retries.max_attempts if retries and retries.max_attempts >= 0 else "unlimited")
    elif decision.action is Action.REQUEUE:
        log.info("chain %s re-queued for %.1fs: %s", chain_id, decision.delay_ms / 1000,
                 decision.requeued)
    elif decision.reason is not None:
        log.info("chain %s is not retried: %s", chain_id, decision.reason)


def failure_of(outcome: ChainOutcome) -> RunFailure:
    """Exit code, last output lines and timeout kind of the attempt that failed the run."""
    failed = [a for a in outcome.attempts if a.outcome in (FAILED, TIMEOUT)]
    if not failed:
        return RunFailure()
    last = failed[-1]
    return RunFailure(last.exit_code, tuple(last.last_lines),
                      TimeoutKind.from_words(last.timeout_kind))


class Scheduler:
    def __init__(self, queue: ChainQueue, agents: list[Agent],
                 on_chain_finished: Callable[[str], None], sweep_s: float = 2.0,
                 clock: Clock = SYSTEM):
        self.queue = queue
        self.clock = clock
        self.agents = agents
        self.on_chain_finished = on_chain_finished
        self.sweep_s = sweep_s
        self._wake = asyncio.Event()
        self._offered: Offered[tuple[bool, datetime | None]] = Offered()  # `offer'
        self._running: dict[str, asyncio.Task] = {}  # agent id -> task
        self.shutting_down = False
        self._submission_of: dict[str, str] = {}  # claimed chain id -> submission id
        self._agent_of: dict[str, Agent] = {}  # claimed chain id -> its agent
        self._fenced: set[str] = set()  # chains whose tools `fence` stopped
        self._fence_reason = ""  # why, said on the runs given back
        self._reports = Reports(self._stopping, clock)  # what agents report, in order
        self._progress_written: dict[str, float] = {}  # chain id -> when (monotonic)
        # `steepy run': claim the chains of these submissions only (its own, those it resumed)
        self.only_submissions: frozenset[str] | None = None
        self.on_crash: Callable[[BaseException], None] = _reraise  # a task of ours died
        self._stop: asyncio.Event | None = None
        self.commits = GroupCommit(queue, self._stopping, lambda claimed: self._give_back(
            *claimed, reason="the agent that claimed it was stopped"), clock)
        self._pending_ends: set[asyncio.Task] = set()  # ends recorded while the next runs

    @property
    def wakes(self) -> int:
        return self._offered.wakes

    def wake(self) -> None:
        self._offered.void()  # something changed here: what the engine read before is stale
        self._wake.set()

    def idle_claims(self) -> list[ClaimFor]:
        """A claim for each agent without a chain."""
        return [self._claim_for(a) for a in self.agents if a.id not in self._running]

    def offer(self, outlook: tuple[bool, datetime | None], wakes: int) -> None:
        """The engine read `ChainQueue.outlook` for `idle_claims` just now (after the commits
        that woke it), when `wakes` was this scheduler's count of them: unless it was woken
        since, the next round uses it instead of a read of its own."""
        self._offered.put(outlook, wakes)
        self._wake.set()

    def agent_event(self, kind: EventKind, data: dict) -> None:
        """What an agent reports (attempt failures, retries, ...: `data` is the event's fields
        and `chainId`) goes on the submission's timeline as it is; a chain's estimated progress
        is stored at most every PROGRESS_EVERY_S seconds. A field the kind does not declare
        raises TypeError."""
        chain_id = data.get("chainId")
        submission_id = self._submission_of.get(chain_id)
        if submission_id is None:
            return
        if kind == EventKind.CHAIN_PROGRESS:
            if data["progress"] >= 1.0:
                return  # the chain is about to finish: its end says so, in the same breath
            now = self.clock.monotonic()
            if now - self._progress_written.get(chain_id, -PROGRESS_EVERY_S) < PROGRESS_EVERY_S:
                return
            self._progress_written[chain_id] = now
            self._write(self.queue.set_progress, submission_id, chain_id, data["progress"])
            return
        event = EventKind(kind).build({k: v for k, v in data.items() if k != "chainId"})
        self._write(functools.partial(self.queue.add_event, submission_id, event, chain_id))

    def _write(self, call_: Callable, *args) -> None:
        """What agents report is stored in the order they reported it (reports.py)."""
        self._reports.add(functools.partial(call_, *args))

    async def store_attempt(self, chain_id: str, run_number: int, record: AttemptRecord,
                            durable: bool) -> None:
        """An agent's attempt as it is now goes to the registry with the next transaction
        (`durable`: before this returns). One that cannot be stored before the engine stops
        raises `Cancelled`: its tool must not start."""
        with database_failure_said(log, "process chain %s: attempt %d of %s could not be stored "
                                   "(%s); it does not start", chain_id, record.attempt,
                                   record.executable_id) as dropped:
            await self.commits.store_attempt(chain_id, run_number, record, durable)
        if dropped.error is not None:
            raise Cancelled() from dropped.error

    def stop_chains(self, chain_ids: list[str]) -> None:
        """Cancel chains claimed by this engine's agents, also those not started yet (the
        agent keeps the request until the chain starts)."""
        for chain_id in chain_ids:
            agent = self._agent_of.get(chain_id)
            if agent is not None:
                agent.cancel(chain_id)

    def fence(self, reason: str) -> list[str]:
        """Stop the tools of the chains this engine's agents run, and give the chains back
        (REGISTERED again, once the database can be written) instead of recording their
        ends: another engine may run them soon (fencing.py). A chain claimed ahead does not
        start: it goes back when the one before it has stopped. The ids of those stopped now
        (not already)."""
        stopped = []
        for chain_id, agent in list(self._agent_of.items()):
            if agent.current_chain_id == chain_id and chain_id not in self._fenced:
                self._fenced.add(chain_id)
                agent.cancel(chain_id)
                stopped.append(chain_id)
        if stopped:
            self._fence_reason = reason
        return stopped

    @property
    def busy(self) -> bool:
        return bool(self._running)

    def busy_agents_only(self) -> bool:
        """Every agent of this engine is running a chain."""
        return len(self._running) == len(self.agents)

    async def run(self, stop: asyncio.Event) -> None:
        self._stop = stop
        await in_rounds("scheduler", lambda: self._round(stop), self._wake, stop, log,
                        self.clock)
        # give running chains back instead of finishing them as cancelled
        self.shutting_down = True
        for agent in self.agents:
            agent.cancel()
        await self.drain()

    async def _round(self, stop: asyncio.Event) -> float:
        """Resume due chains, hand out work, stop cancelled chains; how long to sleep. An idle
        scheduler with nothing to do makes one read in one thread call (`ChainQueue.outlook`):
        it claims, in a write transaction, only what that read found claimable."""
        offered = self._offered.take()
        claimable, due = offered[0] if offered else await call(self.queue.outlook,
                                                               self.idle_claims())
        if due is not None and due < self.clock.now():
            claimable = bool(await call(self.queue.resume_due_chains, self.clock.now())) \
                or claimable
            due = await call(self.queue.next_wake_up)
        if stop.is_set():
            return 0
        if claimable:
            await self._dispatch()
        await self._stop_cancelled()
        timeout = self.sweep_s
        if due is not None:
            timeout = max(0.01, min(timeout, (due - self.clock.now()).total_seconds() + 0.005))
        return timeout

    def _stopping(self) -> bool:
        return self._stop is not None and self._stop.is_set()

    async def drain(self) -> None:
        """Wait for the runs in progress (after their agents were told to cancel, or not)."""
        if self._running:
            await asyncio.gather(*self._running.values(), return_exceptions=True)
        if self._pending_ends:
            await asyncio.gather(*self._pending_ends, return_exceptions=True)
        await self._reports.drain()

    def _claim_for(self, agent: Agent) -> ClaimFor:
        return ClaimFor(agent.id, frozenset(agent.capabilities), self.only_submissions)

    async def _dispatch(self) -> None:
        """A chain for each idle agent, claimed together (an agent gets none if nothing
        left fits its capabilities)."""
        idle = [agent for agent in self.agents if agent.id not in self._running]
        if not idle:
            return
        got = await asyncio.gather(*(self.commits.submit(None, self._claim_for(agent))
                                     for agent in idle))
        for agent, claimed in zip(idle, got):
            if claimed is not None:
                self._running[agent.id] = asyncio.create_task(self._work(agent, claimed),
                                                              name=f"agent {agent.id}")

    async def _stop_cancelled(self) -> None:
        if self._agent_of:
            self.stop_chains(await call(self.queue.chains_to_stop,
                                        list(self._agent_of)))

    async def _outcome(self, agent: Agent, record: ChainRecord,
                       run_number: int) -> ChainOutcome:
        if self.shutting_down:  # claimed just as the engine began to stop: give it back
            return ChainOutcome(CS.CANCELLED)
        try:
            return await agent.execute(record.chain, submission_id=record.submission_id,
                                       run_number=run_number, history=record.history)
        except Exception as e:  # a bug must not leave the chain RUNNING forever
            log.exception("agent %s failed on chain %s", agent.id, record.chain.id)
            return ChainOutcome(CS.ERROR, error_message=f"internal error: {e}")

    async def _work(self, agent: Agent, claimed: Claimed | None) -> None:
        """Run chains on one agent for as long as finishing one claims the next. After a
        short chain the agent claims its next chain but one while the next runs (claim
        ahead), so that finishing a chain does not wait for the database: its end is
        recorded, with that claim, while the chain claimed ahead runs."""
        ahead: asyncio.Task | None = None
        try:
            while claimed is not None:
                claimed, ahead = await self._execute(agent, *claimed, ahead)
        except Exception as e:  # a bug: the engine must not live on with a dead agent
            self.on_crash(e)
        finally:
            if ahead is not None:  # what was claimed ahead goes back (the engine stops, or
                left = await asyncio.gather(ahead, return_exceptions=True)  # `fence`)
                if isinstance(left[0], tuple):
                    await self._give_back(*left[0], until_given=True)
            self._running.pop(agent.id, None)
            self.wake()  # the agent is free: look for work it may take

    async def _execute(self, agent: Agent, record: ChainRecord, run_number: int,
                       ahead: asyncio.Task | None) -> tuple[Claimed | None, asyncio.Task | None]:
        """Run one chain and record its end; the agent's next chain, and the task that
        claims the one after it ahead (or None)."""
        chain = record.chain
        self._submission_of[chain.id] = record.submission_id
        self._agent_of[chain.id] = agent
        log.info("claimed chain %s (submission %s) on agent %s, run %d", chain.id,
                 record.submission_id, agent.id, run_number)
        started = self.clock.monotonic()
        outcome = await self._outcome(agent, record, run_number)
        took = self.clock.monotonic() - started
        short = took < AHEAD_BELOW_S
        decision = after_run(record, run_number, outcome, self.clock.now())
        fenced = chain.id in self._fenced
        back = outcome.status == CS.CANCELLED and (fenced or self.shutting_down)
        if back:  # (stopped by its engine, not cancelled: another engine runs it again)
            log.info("chain %s handed back after %.1fs, run %d: %s", chain.id, took,
                     run_number, self._fence_reason if fenced else "this engine stops")
        else:
            log_end(record, run_number, outcome, decision, took)
        await self._reports.drain()  # the run's attempt events go on the timeline before its end
        try:
            self._fenced.discard(chain.id)
            if back and fenced:
                await self._give_back(record, run_number, self._fence_reason, until_given=True)
                return None, ahead
            if back:
                await self._give_back(record, run_number)
                return None, ahead
            end = RunEnd(chain.id, run_number,
                         REQUEUED if decision.requeued is not None else str(outcome.status),
                         decision.status,
                         results=outcome.results if outcome.status == CS.SUCCESS else None,
                         error_message=outcome.error_message, attempts=outcome.attempts,
                         auto_resume_after=decision.resume_at, requeued=decision.requeued,
                         submission_id=record.submission_id)
            claim = None if self.shutting_down else self._claim_for(agent)
            following = await ahead if ahead is not None else None
            if following is not None and claim is not None:
                # the next chain is here already: it starts now, and this end is recorded
                # meanwhile (after a short chain, with the claim of the one after)
                task = self._spawn(self._record_quietly(end, agent, claim if short else None))
                return following, task if short else None
            if following is not None:  # claimed ahead just as the engine began to stop
                await self._give_back(*following)
            # the end and the agent's next claim are one transaction (shared with other
            # agents'); while the database cannot be written, the outcome waits here (an
            # engine stopped meanwhile leaves the run open: the next engine runs it again)
            claimed = await self._record_quietly(end, agent, claim)
            if short and claimed is not None and claim is not None:
                return claimed, self._spawn(self._claim_quietly(agent))
            return claimed, None
        finally:
            self._submission_of.pop(chain.id, None)
            self._progress_written.pop(chain.id, None)
            self._agent_of.pop(chain.id, None)

    def _assign(self, claimed: Claimed | None, agent: Agent) -> Claimed | None:
        """A chain claimed for `agent': a cancel for it goes to that agent from now on (it
        keeps the request until the chain starts)."""
        if claimed is not None:
            self._submission_of[claimed[0].chain.id] = claimed[0].submission_id
            self._agent_of[claimed[0].chain.id] = agent
        return claimed

    async def _record_quietly(self, end: RunEnd, agent: Agent,
                              claim: ClaimFor | None) -> Claimed | None:
        """Record the end (and claim, for `agent'); a database that fails until the engine
        stops leaves the run open, and the chain is run again by whoever takes it over."""
        with database_failure_said(log, "process chain %s: its end could not be recorded (%s); "
                                   "the engine that takes it over runs it again",
                                   end.chain_id) as dropped:
            claimed = await self.commits.submit(end, claim)
        if dropped.error is not None:
            return None
        self.on_chain_finished(end.submission_id or "")
        if end.chain_status == CS.PAUSED:
            self.wake()  # the sweep must know when this chain is due
        return self._assign(claimed, agent)

    async def _claim_quietly(self, agent: Agent) -> Claimed | None:
        with database_failure_said(log, "agent %s: no chain claimed ahead (%s)", agent.id):
            return self._assign(await self.commits.submit(None, self._claim_for(agent)), agent)
        return None

    def _spawn(self, work: Coroutine[Any, Any, Claimed | None]) -> asyncio.Task:
        """A background write of the hot path; a bug in it stops the engine."""
        task = asyncio.create_task(work)
        self._pending_ends.add(task)
        task.add_done_callback(self._ended)
        return task

    def _ended(self, task: asyncio.Task) -> None:
        self._pending_ends.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self.on_crash(task.exception())

    async def _give_back(self, record: ChainRecord, run_number: int,
                         reason: str = "the engine running it was stopped",
                         until_given: bool = False) -> None:
        """A chain this engine will not run: REGISTERED again for whoever runs next. Tried
        once (the engine stops: another takes it over), or `until_given` (it goes on: the
        chain would otherwise stay RUNNING with nothing running it) until the engine stops."""
        self._agent_of.pop(record.chain.id, None)
        self._submission_of.pop(record.chain.id, None)
        stopping = ((lambda: self._stop is not None and self._stop.is_set()) if until_given
                    else (lambda: True))
        with database_failure_said(log, "process chain %s could not be given back (%s); the "
                                   "engine that takes it over runs it", record.chain.id):
            await persist(f"giving process chain {record.chain.id} back", stopping,
                          self.queue.requeue_run, record.chain.id, run_number, reason,
                          clock=self.clock)


def _reraise(error: BaseException) -> None:
    raise error


