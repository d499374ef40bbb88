"""One attempt of one executable: it runs one try of the tool through its runtime, records it
(with a retry policy the record is stored before the tool starts: the attempt is spent then),
and reports how it ended: the tool's `RunResult` when it succeeded, else it raises `Failure`,
`Requeued` (its policy's `requeue` takes it back, uncounted, or the tool asked for it),
`PrunedByTool` (the tool ended its chain) or `Cancelled`. The tool's signal file (extensions
11, steepy/agent/signals.py) is read once the tool has ended on its own, whatever its exit code.

The retry loop around it is steepy/agent/retry.py; steepy/agent/runner.py puts them together.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from dataclasses import dataclass
from typing import Any

from steepy.agent.cancel import Cancelled
from steepy.agent.config import CANCELLED, FAILED, REQUEUED, SUCCESS, TIMEOUT, AttemptRecord
from steepy.agent.context import ExecContext
from steepy.agent.environment import attempt_environment
from steepy.agent.executor import identity as executor_identity
from steepy.agent.lastfailure import last_failure_env
from steepy.agent.messages import failure_message, last_output, timeout_message
from steepy.agent.outputs import clear_outputs, missing_output_settled
from steepy.agent.process import Limits, RunResult, run_process
from steepy.agent.secrets import engine_secrets, redacted
from steepy.agent.signals import (MAX_REQUEUES, SIGNAL_FILE, SIGNAL_REASON, PrunedByTool, Signal,
                                  SignalError, read_signal, remove_signal, signal_path)
from steepy.agent.software import SoftwareMissing, provide
from steepy.errors import SteepyError
from steepy.events import EventKind
from steepy.model.attempt import BY_POLICY, BY_TOOL, PRUNED, RUNNING
from steepy.model.durations import format_duration
from steepy.model.policies import TimeoutKind
from steepy.model.processchain import Executable
from steepy.runtimes.seam import Launch, RuntimeContext

log = logging.getLogger(__name__)
HOST = socket.gethostname()


class Failure(SteepyError):
    """An attempt (or the deadline during a pause) ended the executable unsuccessfully."""

    def __init__(self, message: str, timeout_kind: TimeoutKind | None = None,
                 result: RunResult | None = None, record: AttemptRecord | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.timeout_kind = timeout_kind
        self.result = result
        self.record = record


class Requeued(Failure):
    """The attempt failed in a way its policy's `requeue' takes, or its tool asked to run
    again: it does not count; it runs again after `delay_ms' (`rule' says how that was chosen)."""

    def __init__(self, message: str, reason: str, result: RunResult, record: AttemptRecord,
                 delay_ms: int, rule: str) -> None:
        super().__init__(message, None, result, record)
        self.reason, self.delay_ms, self.rule = reason, delay_ms, rule


@dataclass
class Executing:
    """What the attempts of one executable share: its runtime, its limits (the deadline on
    the loop's clock for the tool's timers, and on the context's clock for the pauses) and
    the exit code and record of the failed attempt before, and the `requeue' signals given."""

    exe: Executable
    ctx: ExecContext
    runtime_name: str
    runtime: Any
    limits: Limits
    deadline_at: float | None  # ctx.clock.monotonic() when the deadline passes
    last_exit: int | None = None
    last_failure: AttemptRecord | None = None
    signal_requeues: int = 0
    started: int = 0  # attempts begun in this run, re-queued ones too (they keep their number)

    @property
    def counted(self) -> bool:
        """Does a retry policy count the attempts (so each is stored before its tool runs)?"""
        return self.exe.retries is not None

    def deadline_passes_within(self, delay_ms: float) -> bool:
        return (self.deadline_at is not None
                and self.ctx.clock.monotonic() + delay_ms / 1000 >= self.deadline_at)

    def deadline_failure(self) -> Failure:
        kind, before = TimeoutKind.DEADLINE, self.last_failure  # ends during a pause
        lines = None if before is None else before.last_lines
        return Failure(timeout_message(self.exe, kind, lines), kind)


class Attempt:
    """Attempt `number` of an executable: `run()` runs it once; `record` is what it left
    (from the moment it starts)."""

    record: AttemptRecord

    def __init__(self, shared: Executing, number: int) -> None:
        self.shared, self.number = shared, number
        self.signal_file = signal_path(shared.ctx.config.tmp_path, shared.ctx.chain_id)

    async def run(self) -> RunResult:
        shared = self.shared
        exe, ctx = shared.exe, shared.ctx
        env, steepy_env = self._environment()
        if ctx.on_attempt is not None:
            ctx.on_attempt(exe, self.number)
        record = self.record = AttemptRecord(
            exe.id, exe.service_id, self.number, start_time=ctx.clock.now(), outcome=RUNNING,
            fallback_for=exe.fallback_for, ordinal=len(ctx.records), host=HOST)
        _where(record)
        ctx.records.append(record)
        shared.started += 1
        # with a retry policy, the attempt is spent once it is stored: before its tool runs
        try:
            await ctx.store(record, shared.counted)
        except Cancelled:  # it could not be stored (the engine stops): it does not start
            record.outcome, record.end_time = CANCELLED, ctx.clock.now()
            record.message = "not started: its record could not be stored"
            raise
        try:
            return await self._try(env, steepy_env)
        finally:  # a failure of a counted attempt is stored before anything goes on
            remove_signal(self.signal_file)
            await ctx.store(record, shared.counted and record.outcome not in (SUCCESS, RUNNING))

    def _environment(self) -> tuple[dict[str, str], list[str]]:
        """The tool's environment (the service's declarations included) and the names of
        steepy's own variables in it."""
        shared, ctx = self.shared, self.shared.ctx
        env = attempt_environment(ctx.base_env, shared.exe)
        steepy_env = {
            "STEEPY_SUBMISSION_ID": ctx.submission_id, "STEEPY_PROCESS_CHAIN_ID": ctx.chain_id,
            "STEEPY_RUN_NUMBER": str(ctx.run_number), "STEEPY_EXECUTABLE_ID": shared.exe.id,
            "STEEPY_ATTEMPT": str(self.number),
            "STEEPY_LAST_EXIT_CODE": "" if shared.last_exit is None else str(shared.last_exit),
            **last_failure_env(shared.last_failure), SIGNAL_FILE: self.signal_file,
        }
        env.update(steepy_env)
        return env, list(steepy_env)

    async def _try(self, env: dict[str, str], steepy_env: list[str]) -> RunResult:
        shared, ctx = self.shared, self.shared.ctx
        exe, problem = shared.exe, None
        if exe.python is not None or exe.modules:  # (its software first: steepy.agent.software)
            exe, problem = await self._software(env)
            if exe is None:
                return await self._ended(RunResult(cancelled=True), Launch([shared.exe.path]))
        launch, problem = (_launch(shared, exe, env, steepy_env) if problem is None
                           else (Launch([exe.path]), problem))
        if problem is None and launch.prepare is not None:
            try:
                await launch.prepare()
            except Exception as e:
                log.exception("runtime `%s' could not prepare service `%s'", shared.runtime_name,
                              shared.exe.service_id)
                problem = (f"runtime `{shared.runtime_name}' cannot start it: "
                           f"{type(e).__name__}: {e}")
        if problem is None and self._after_another():
            # (after the runtime's leftovers were ended: nothing writes there now)
            left, why_not = await asyncio.to_thread(clear_outputs, exe)
            if left and why_not is None:
                log.info("removed what an earlier attempt of `%s' left at its outputs: %s",
                         exe.service_id, ", ".join(path for path, _ in left))
            elif why_not is not None:  # (a container's root-owned folder): it runs as it would
                said = f"{why_not}; attempt {self.number} runs with it there"
                log.warning("service `%s': %s", exe.service_id, said)
                ctx.on_lines(shared.exe, [f"steepy: {said}"])  # (in its log: `steepy logs')
        if problem is not None:
            return await self._ended(RunResult(spawn_error=problem), launch)
        try:
            result = await run_process(
                launch.argv, env=env, cwd=ctx.config.workdir, limits=shared.limits,
                token=ctx.token, on_lines=lambda lines: ctx.on_lines(shared.exe, lines),
                keep_lines=ctx.config.output_lines_to_collect,
                grace_ms=ctx.config.kill_grace_period_ms, on_kill=launch.stop,
                on_started=self._placed)
        finally:
            await _clean_up(shared.exe, launch)
        return await self._ended(result, launch)

    def _after_another(self) -> bool:
        """Whether an attempt that may have written at this executable's output paths came
        before: its own earlier one (re-queued ones keep their number), the executable a
        fallback stands in for, an earlier run of the chain (`steepy retry', one its engine
        left). Not on a chain's first try: its
        paths are new, and nothing is looked at for 10,000 chains that run once."""
        return (self.shared.started > 1 or self.number > 1
                or self.shared.exe.fallback_for is not None or self.shared.ctx.run_number > 1)

    async def _software(self, env: dict[str, str]) -> tuple[Executable | None, str | None]:
        """The executable with its modules and Python environment provided in `env', or why
        they could not be; (None, None) when the chain was cancelled meanwhile (which ends a
        build at once)."""
        shared, token = self.shared, self.shared.ctx.token
        task = asyncio.ensure_future(provide(shared.exe, env, shared.ctx.config.environments_dir))
        token.add_callback(task.cancel)
        try:
            return await task, None
        except SoftwareMissing as e:
            return shared.exe, str(e)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if token.cancelled and not (current is not None and current.cancelling()):
                return None, None
            raise
        finally:
            token.remove_callback(task.cancel)

    def _placed(self, pgid: int) -> None:
        """The tool runs: its process group goes with the next transaction (a counted
        attempt's row was stored before it started; others' are stored soon anyway)."""
        _where(self.record, pgid)
        if self.shared.counted:
            asyncio.get_running_loop().create_task(self.shared.ctx.store(self.record, False))

    async def _ended(self, result: RunResult, launch: Launch) -> RunResult:
        """Record how the tool ended; its result if it succeeded, else raise how it failed."""
        shared, record = self.shared, self.record
        record.end_time = shared.ctx.clock.now()
        record.exit_code, record.signal = result.exit_code, result.signal
        secrets = engine_secrets(shared.ctx.config.withheld)  # (none in what is said of it)
        result.last_lines = [redacted(line, secrets) for line in result.last_lines]
        record.last_lines = result.last_lines
        told = await self._told(result)
        missing = None
        if result.ok and told is None:
            clock = shared.ctx.clock
            missing = await missing_output_settled(
                shared.exe, shared.ctx.config.plugins.output_data_types(),
                getattr(shared.runtime, "outputs_settle_ms", 0), clock.sleep, clock.monotonic)
            if missing is None:
                record.outcome = SUCCESS
                return result
        if result.cancelled:
            record.outcome, record.message = CANCELLED, "cancelled"
            raise Cancelled()
        if isinstance(told, Signal):
            raise self._signalled(told, result, secrets)
        if result.timeout_kind is not None:
            kind = result.timeout_kind
            record.outcome, record.timeout_kind = TIMEOUT, kind.words
            message = timeout_message(shared.exe, kind, result.last_lines)
        elif told is not None or missing is not None:  # a malformed signal file, no output
            record.outcome = FAILED
            message = (f"Execution of service `{shared.exe.service_id}' failed: "
                       f"{told or missing}" + last_output(result.last_lines))
        else:
            record.outcome = FAILED
            message = failure_message(shared.exe, launch.argv, result,
                                      await _explain(launch, shared.runtime_name))
        record.message = message = redacted(message, secrets)
        shared.last_exit, shared.last_failure = result.exit_code, record
        raise self._failure(result, message)

    async def _told(self, result: RunResult) -> Signal | SignalError | None:
        """What the tool wrote to its signal file, once it has ended on its own (one that was
        cancelled or timed out, or never started, says nothing). Read in a thread: the file
        lies on a shared file system under a cluster's runtimes."""
        if result.cancelled or result.timeout_kind is not None or result.spawn_error is not None:
            return None
        try:
            return await asyncio.to_thread(read_signal, self.signal_file)
        except SignalError as e:
            return e

    def _signalled(self, signal: Signal, result: RunResult, secrets: list[str]) -> Exception:
        """What the tool's `prune' or `requeue' makes of the attempt."""
        shared, record = self.shared, self.record
        if signal.kind == "prune":
            record.outcome, record.message = PRUNED, redacted(signal.describe(), secrets)
            return PrunedByTool(redacted(signal.reason, secrets), record)
        if shared.signal_requeues >= MAX_REQUEUES:
            record.outcome = FAILED
            record.message = (f"Execution of service `{shared.exe.service_id}' failed: its tool "
                              f"asked to be re-queued more than {MAX_REQUEUES} times")
            shared.last_exit, shared.last_failure = result.exit_code, record
            return self._failure(result, record.message)
        shared.signal_requeues += 1
        record.outcome, record.message = REQUEUED, redacted(signal.describe(), secrets)
        record.requeued_by = BY_TOOL
        return Requeued(record.message, SIGNAL_REASON, result, record, signal.delay_ms,
                        f"requeue after {format_duration(signal.delay_ms)}")

    def _failure(self, result: RunResult, message: str) -> Failure:
        """How the attempt failed: `Requeued` when the policy takes it back, else `Failure`
        (said as it happens)."""
        shared, record = self.shared, self.record
        exe, ctx = shared.exe, shared.ctx
        reason = None if exe.retries is None else exe.retries.requeue_reason(
            result.exit_code, result.last_lines, result.timeout_kind)
        if reason is not None and exe.retries is not None and exe.retries.requeue is not None:
            record.outcome, record.requeued_by = REQUEUED, BY_POLICY
            rule = exe.retries.requeue
            return Requeued(message, reason, result, record, rule.delay, rule.describe())
        ctx.emit(EventKind.CHAIN_ATTEMPT_FAILED, {
            "chainId": ctx.chain_id, "executableId": exe.id, "serviceId": exe.service_id,
            "attempt": self.number, "outcome": record.outcome, "exitCode": result.exit_code,
            "signal": result.signal, "timeoutKind": record.timeout_kind, "message": message})
        return Failure(message, result.timeout_kind, result, record)


def _launch(shared: Executing, exe: Executable, env: dict[str, str],
            steepy_env: list[str]) -> tuple[Launch, str | None]:
    """How the runtime starts this attempt of `exe' (shared.exe, or its copy in a Python
    environment); a runtime that fails says why as a failed start."""
    name, config = shared.runtime_name, shared.ctx.config
    context = RuntimeContext(config.tmp_path, env, steepy_env, config.runtime_settings(name),
                             config.kill_grace_period_ms,
                             None if config.workdir is None else str(config.workdir),
                             shared.ctx.capabilities,
                             first_of_run=len(shared.ctx.records) <= 1)  # (this one's in)
    try:
        launch = shared.runtime.command(exe, context)
        if not isinstance(launch, Launch) or not launch.argv:
            raise TypeError(f"command() gave {launch!r}, not a Launch with a command line")
        return launch, None
    except Exception as e:
        log.exception("runtime `%s' failed for service `%s'", name, exe.service_id)
        return Launch([exe.path]), f"runtime `{name}' cannot start it: {type(e).__name__}: {e}"


async def _explain(launch: Launch, runtime_name: str) -> str | None:
    """What the runtime knows of how a failed attempt ended (a failing runtime says nothing)."""
    if launch.explain is None:
        return None
    try:
        return await launch.explain()
    except Exception:
        log.exception("runtime `%s' could not say how an attempt ended", runtime_name)
        return None


async def _clean_up(exe: Executable, launch: Launch) -> None:
    if launch.clean_up is None:
        return
    try:
        await launch.clean_up()
    except Exception:
        log.exception("clean-up of runtime `%s' failed for service `%s'", exe.runtime,
                      exe.service_id)


def _where(record: AttemptRecord, pgid: int | None = None) -> None:
    """Where the attempt's processes run: the executor that spawns them (an engine that
    takes a dead engine's run over waits for it to be gone) and the tool's process group."""
    known = executor_identity()
    if known is not None:
        record.executor_pid, record.executor_started = known
    if pgid is not None:
        record.pgid = pgid
