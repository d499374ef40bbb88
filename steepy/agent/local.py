"""The local agent: runs the executables of one process chain at a time on this machine."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import random
import threading
from collections import deque
from dataclasses import replace
from typing import Any, Awaitable, Callable, Sequence

from steepy.agent.cancel import CancelToken
from steepy.agent.config import AgentConfig, AttemptRecord, ChainOutcome
from steepy.agent.environment import engine_environment, environment  # noqa: F401 (re-exported)
from steepy.agent.logs import ChainLog, LogSink
from steepy.agent.logsource import log_path
from steepy.agent.fallback import AdapterFailed, adapted, run_step, steps
from steepy.events import EventKind
from steepy.agent.context import ExecContext
from steepy.agent.outputs import collect_results, output_dirs
from steepy.errors import SteepyError
from steepy.model.clock import SYSTEM, Clock
from steepy.model.processchain import DATA_TYPE_DIRECTORY, Executable, ProcessChain
from steepy.model.stopping import stop_marker
from steepy.model.submission import ProcessChainStatus

log = logging.getLogger(__name__)

# (executable, its most recent output lines) -> progress of that executable in 0..1, or None
ProgressEstimator = Callable[[Executable, list[str]], "float | None"]
EventCallback = Callable[[EventKind, dict], None]
# (chain id, run number, the attempt as it is now, wait until it is committed) -> stored; raises
# `Cancelled` when it cannot be stored (the engine stops): the attempt must not start then
AttemptStore = Callable[[str, int, AttemptRecord, bool], Awaitable[None]]
# (submission id, chain id, run number, the workflow catch's attempt 1) -> whether it may run
RecoveryClaims = Callable[[str, str, int, AttemptRecord], Awaitable[bool]]

_MAX_CACHED_DIRS = 10_000


class LocalAgent:
    """Executes process chains (one at a time) as supervised subprocesses.

    `cancel` may be called from any thread or task, also before `execute` starts the chain.
    `on_event(kind, data)` hears the events of a run (steepy/events/: attempts failed, retries
    scheduled, attempts re-queued, fallbacks started, progress) as they happen: `data` holds
    the kind's fields and `chainId`.
    """

    def __init__(self, agent_id: str, config: AgentConfig | None = None,
                 capabilities: Sequence[str] = (), progress_estimator: ProgressEstimator | None = None,
                 on_event: EventCallback | None = None, rng: random.Random | None = None,
                 log_sink: LogSink | None = None,
                 store_attempt: AttemptStore | None = None, clock: Clock = SYSTEM,
                 claim_recovery: RecoveryClaims | None = None) -> None:
        self.id = agent_id
        self.config = config if config is not None else AgentConfig()
        self.capabilities = tuple(capabilities)
        plugins = self.config.plugins
        if progress_estimator is None and plugins.has_estimators():
            progress_estimator = plugins.estimate  # the estimator of each service
        self.progress_estimator = progress_estimator
        self.on_event = on_event
        self.rng = rng
        self.log_sink = log_sink  # where logs go besides their files (read on other machines)
        self.store_attempt = store_attempt  # attempts are stored as they happen (registry)
        self.clock = clock  # stamps attempts, waits their pauses
        self.claim_recovery = claim_recovery  # the catch's maxRecoveries (agent/recovery.py)
        self._lock = threading.Lock()
        self._chain_id: str | None = None
        self._token: CancelToken | None = None
        self._pending_cancels: set[str] = set()
        self._progress: float | None = None
        self._made_dirs: set[str] = set()

    # -- state -----------------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self._chain_id is not None

    @property
    def current_chain_id(self) -> str | None:
        return self._chain_id

    @property
    def progress(self) -> float | None:
        """Estimated progress of the running chain (0..1, two decimals), None when idle."""
        return self._progress

    def cancel(self, chain_id: str | None = None) -> None:
        """Cancel the running chain (or the chain `chain_id`, even if it has not started yet)."""
        with self._lock:
            if self._token is not None and chain_id in (None, self._chain_id):
                self._token.cancel()
            elif chain_id is not None:
                self._pending_cancels.add(chain_id)

    def handle_message(self, chain_id: str, message: dict) -> Any:
        """Steep's per-chain agent address: `{"action": "cancel" | "getProgress"}`."""
        action = message.get("action")
        if action == "cancel":
            self.cancel(chain_id)
            return None
        if action == "getProgress":
            return self._progress if chain_id == self._chain_id else None
        raise SteepyError(f"unknown action {action!r} for process chain `{chain_id}'")

    # -- execution -------------------------------------------------------------------------------

    async def execute(self, chain: ProcessChain, *, submission_id: str = "",
                      run_number: int = 1, history: Sequence[AttemptRecord] = ()) -> ChainOutcome:
        """Run every executable of `chain` in order; never raises for a failing tool. With
        `history`, the attempts of the cut runs this run goes on from, what they spent counts
        (agent/resume.py)."""
        token = CancelToken(asyncio.get_running_loop())
        with self._lock:
            if self._chain_id is not None:
                raise SteepyError(f"agent `{self.id}' is busy with process chain `{self._chain_id}'")
            self._chain_id, self._token = chain.id, token
            if chain.id in self._pending_cancels:
                self._pending_cancels.discard(chain.id)
                token.cancel()
        self._progress = 0.0
        config = self.config
        chain_log = ChainLog(None if config.log_dir is None else functools.partial(
            log_path, config.log_dir, chain.id, run_number, config.log_group_by_prefix),
            self.log_sink, chain.id, run_number, config.log_timestamps)
        ended = asyncio.Event()
        shipping = (asyncio.create_task(chain_log.ship_until(ended), name=f"log of {chain.id}")
                    if self.log_sink is not None else None)
        records: list[AttemptRecord] = []
        try:
            return await self._run(chain, token, chain_log, records, submission_id, run_number,
                                   history)
        finally:
            if shipping is not None:  # the rest, before the run is recorded as ended
                ended.set()
                (failed,) = await asyncio.gather(shipping, return_exceptions=True)
                if isinstance(failed, Exception):  # a bug: said, but the run's outcome stands
                    log.error("shipping the log of process chain %s failed", chain.id,
                              exc_info=failed)
            chain_log.close()
            with self._lock:
                self._chain_id, self._token, self._progress = None, None, None

    async def _run(self, chain: ProcessChain, token: CancelToken, chain_log: ChainLog,
                   records: list[AttemptRecord], submission_id: str, run_number: int,
                   history: Sequence[AttemptRecord] = ()) -> ChainOutcome:
        if token.cancelled:
            return ChainOutcome(ProcessChainStatus.CANCELLED, attempts=records)
        problem = self._make_output_dirs(chain)
        if problem is not None:
            return ChainOutcome(ProcessChainStatus.ERROR, error_message=problem, attempts=records)
        total = len(chain.executables)
        recent: deque[str] = deque(maxlen=max(self.config.output_lines_to_collect, 1))
        index = 0

        def on_lines(exe: Executable, lines: list[str]) -> None:
            chain_log.write_lines(lines)
            if self.progress_estimator is not None:
                for line in lines:
                    recent.append(line)
                    self._estimate(chain.id, exe, list(recent), index, total)

        def on_attempt(exe: Executable, number: int) -> None:
            recent.clear()

        # steepy's own settings (STEEPY_*, STEEP_*: token, database URL) and the variables it
        # reads secrets from stay with the engine
        env = engine_environment(self.config.env, self.config.withheld)
        store = self.store_attempt
        save = None if store is None else functools.partial(store, chain.id, run_number)
        claims = self.claim_recovery
        ctx = ExecContext(self.config, token, chain.id, submission_id, run_number, env, on_lines,
                          self._emit, records, self.rng, on_attempt,
                          tuple(chain.required_capabilities), tuple(history), save,
                          self.clock, None if claims is None else functools.partial(
                              claims, submission_id, chain.id, run_number))
        plugins = self.config.plugins
        for step in steps(chain.executables):
            index = step.index
            try:
                step = adapted(step, lambda exe: plugins.adapt_inputs(exe, chain))
            except AdapterFailed as e:
                log.exception("input adapter failed for service `%s'", e.service_id)
                return ChainOutcome(ProcessChainStatus.ERROR, attempts=records, error_message=(
                    f"Execution of service `{e.service_id}' failed: an input adapter failed: "
                    f"{e.cause}"))
            outcome = await run_step(step, ctx)
            if outcome.status in ("SUCCESS", "SKIPPED"):
                self._set_progress(chain.id, (step.last_index + 1) / total)
                continue
            if outcome.status in ("PRUNED", "STOPPED"):  # not in error (extensions 10, 11)
                # what ran before it counts; the engine skips what needs the rest
                done = await self._results(replace(chain, executables=chain.executables[
                    :step.index]), records)
                if done.status == ProcessChainStatus.SUCCESS:
                    done.results.update(stop_marker(step.executable.id, outcome.message or "",
                                                    outcome.by or step.executable.id))
                    done.pruned = outcome.message or ""
                return done
            status = ProcessChainStatus(outcome.status)
            return ChainOutcome(status, error_message=outcome.message, attempts=records)
        return await self._results(chain, records)

    async def _results(self, chain: ProcessChain, records: list[AttemptRecord]) -> ChainOutcome:
        """The outcome of a chain whose executables have succeeded: their outputs."""
        plugins = self.config.plugins
        adapt = plugins.adapt_output if plugins.output_data_types() else None
        try:
            if adapt is not None or any(a.data_type == DATA_TYPE_DIRECTORY and a.type == "output"
                                        for e in chain.executables for a in e.arguments):
                results = await asyncio.to_thread(collect_results, chain, adapt)
            else:
                results = collect_results(chain)
        except Exception as e:  # an output adapter's bug fails the chain, not the agent
            log.exception("output adapter failed for process chain `%s'", chain.id)
            return ChainOutcome(ProcessChainStatus.ERROR, attempts=records, error_message=(
                f"Collecting the results of process chain `{chain.id}' failed: an output "
                f"adapter failed: {type(e).__name__}: {e}"))
        return ChainOutcome(ProcessChainStatus.SUCCESS, results=results, attempts=records)

    def _make_output_dirs(self, chain: ProcessChain) -> str | None:
        for directory in output_dirs(chain):
            if directory in self._made_dirs:
                continue
            try:
                os.makedirs(directory, exist_ok=True)
            except OSError as e:
                return (f"Cannot create directory `{directory}' for the outputs of process chain "
                        f"`{chain.id}': {e.strerror or e}")
            if len(self._made_dirs) >= _MAX_CACHED_DIRS:
                self._made_dirs.clear()
            self._made_dirs.add(directory)
        return None

    # -- progress and events ---------------------------------------------------------------------

    def _estimate(self, chain_id: str, exe: Executable, lines: list[str], index: int,
                  total: int) -> None:
        try:
            value = self.progress_estimator(exe, lines)  # type: ignore[misc]
        except Exception:
            log.exception("progress estimator failed for service `%s'", exe.service_id)
            return
        if value is None:
            return
        value = min(max(float(value), 0.0), 1.0)
        self._set_progress(chain_id, (index + value) / total)

    def _set_progress(self, chain_id: str, value: float) -> None:
        self._progress = round(value, 2)
        self._emit(EventKind.CHAIN_PROGRESS, {"chainId": chain_id, "progress": self._progress})

    def _emit(self, kind: EventKind, data: dict) -> None:
        if self.on_event is None:
            return
        try:
            self.on_event(kind, data)
        except Exception:
            log.exception("event callback failed for %s", kind)
