"""One executable of a chain under its policies (reference sections 5 and 6, extensions 1-4).

Nesting: deadline (whole executable, retry pauses and re-queue delays included) > retry loop > maximum runtime
(per attempt) > maximum inactivity (per attempt, restarted by every complete output line).
"""

from __future__ import annotations

import asyncio
import logging
import random
import socket
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Awaitable, Callable, Sequence

from steepy.model.common import utcnow
from steepy.agent.cancel import Cancelled, CancelToken
from steepy.agent.environment import attempt_environment
from steepy.agent.config import (
    CANCELLED,
    FAILED,
    REQUEUED,
    SKIPPED,
    SUCCESS,
    TIMEOUT,
    AgentConfig,
    AttemptRecord,
)
from steepy.agent.messages import failure_message
from steepy.agent.resume import FRESH, Resume, resume_point
from steepy.model.attempt import RUNNING
from steepy.agent.executor import identity as executor_identity
from steepy.agent.process import DEADLINE, INACTIVITY, RUNTIME, Limits, RunResult, run_process
from steepy.agent.retry import SKIPPED as SKIPPED_RESULT
from steepy.agent.retry import with_retries
from steepy.errors import SteepyError
from steepy.model.policies import TimeoutPolicy
from steepy.model.processchain import Executable
from steepy.plugins.kinds import Launch, RuntimeContext

log = logging.getLogger(__name__)

TIMEOUT_WORDS = {RUNTIME: "maximum runtime", INACTIVITY: "maximum inactivity", DEADLINE: "deadline"}
_KIND_OF_WORDS = {words: kind for kind, words in TIMEOUT_WORDS.items()}
HOST = socket.gethostname()

# (the attempt as it is now, whether the tool must wait until it is stored) -> stored
SaveAttempt = Callable[[AttemptRecord, bool], Awaitable[None]]


@dataclass
class ExecContext:
    """What every executable of one chain run shares."""

    config: AgentConfig
    token: CancelToken
    chain_id: str
    submission_id: str
    run_number: int
    base_env: dict[str, str]  # the agent's environment plus config.env
    on_lines: Callable[[Executable, list[str]], None]  # log file, progress
    emit: Callable[[str, dict], None]  # attempt-failed / retry-scheduled events
    records: list[AttemptRecord] = field(default_factory=list)
    rng: random.Random | None = None
    on_attempt: Callable[[Executable, int], None] | None = None  # an attempt starts
    capabilities: tuple[str, ...] = ()  # the chain's required capabilities (for runtimes)
    # the attempts of the cut runs this run goes on from (agent/resume.py)
    history: Sequence[AttemptRecord] = ()
    save: SaveAttempt | None = None  # stores an attempt as it starts, pauses and ends

    async def store(self, record: AttemptRecord, durable: bool) -> None:
        """Store the attempt as it is now; `durable`: return only once it is committed."""
        if self.save is not None:
            await self.save(record, durable)


@dataclass
class ExecOutcome:
    status: str  # SUCCESS | SKIPPED | ERROR | CANCELLED
    message: str | None = None


class Failure(SteepyError):
    """An attempt (or the deadline during a pause) ended the executable unsuccessfully."""

    def __init__(self, message: str, timeout_kind: str | None = None,
                 result: RunResult | None = None, record: AttemptRecord | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.timeout_kind = timeout_kind
        self.result = result
        self.record = record


class Requeued(Failure):
    """The attempt failed in a way its policy's `requeue' takes: it does not count."""

    def __init__(self, message: str, reason: str, result: RunResult, record: AttemptRecord) -> None:
        super().__init__(message, None, result, record)
        self.reason = reason


def timeout_message(exe: Executable, kind: str, policy: TimeoutPolicy) -> str:
    return (f"Execution of service `{exe.service_id}' timed out after {policy.timeout} ms "
            f"({TIMEOUT_WORDS[kind]})")


async def _explain(launch: Launch, runtime_name: str) -> str | None:
    """What the runtime knows of how a failed attempt ended (a failing runtime says nothing)."""
    if launch.explain is None:
        return None
    try:
        return await launch.explain()
    except Exception:
        log.exception("runtime `%s' could not say how an attempt ended", runtime_name)
        return None


def _policy_of(exe: Executable, kind: str) -> TimeoutPolicy:
    policy = {RUNTIME: exe.max_runtime, INACTIVITY: exe.max_inactivity, DEADLINE: exe.deadline}[kind]
    assert policy is not None
    return policy


def _launch(runtime, name: str, exe: Executable, ctx: ExecContext, env: dict[str, str],
            steepy_env: list[str]) -> tuple[Launch, str | None]:
    """How the runtime starts this attempt; a runtime that fails says why as a failed start."""
    config = ctx.config
    context = RuntimeContext(config.tmp_path, env, steepy_env, config.runtime_settings(name),
                             config.kill_grace_period_ms,
                             None if config.workdir is None else str(config.workdir),
                             ctx.capabilities)
    try:
        launch = runtime.command(exe, context)
        if not isinstance(launch, Launch) or not launch.argv:
            raise TypeError(f"command() gave {launch!r}, not a Launch with a command line")
        return launch, None
    except Exception as e:
        log.exception("runtime `%s' failed for service `%s'", name, exe.service_id)
        return Launch([exe.path]), f"runtime `{name}' cannot start it: {type(e).__name__}: {e}"


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


def _ended(exe: Executable, last: AttemptRecord, message: str | None) -> ExecOutcome:
    """How an executable ends that a cut run had already ended (or used up)."""
    if last.outcome in (SUCCESS, SKIPPED):
        return ExecOutcome(last.outcome)
    kind = _KIND_OF_WORDS.get(last.timeout_kind or "")
    if last.outcome == TIMEOUT and kind is not None and not _policy_of(exe, kind).error_on_timeout:
        return ExecOutcome("CANCELLED", message)
    return ExecOutcome("ERROR", message)


async def _wait_to_go_on(exe: Executable, ctx: ExecContext, resume: Resume,
                         deadline_at: float | None) -> None:
    """Before an executable goes on from a cut run: the rest of its pause, within its
    deadline (raises `Failure` when the deadline would pass, `Cancelled`)."""
    loop = asyncio.get_running_loop()
    delay_s = 0.0 if resume.due is None else max((resume.due - utcnow()).total_seconds(), 0.0)
    if deadline_at is not None and loop.time() + delay_s >= deadline_at:
        assert exe.deadline is not None
        raise Failure(timeout_message(exe, DEADLINE, exe.deadline), DEADLINE)
    if ctx.token.cancelled:
        raise Cancelled()
    if resume.due is None:
        return
    ctx.emit("retry-scheduled", {
        "chainId": ctx.chain_id, "executableId": exe.id, "serviceId": exe.service_id,
        "attempt": resume.performed + 1, "delayMs": round(delay_s * 1000), "at": resume.due,
        "reason": resume.reason, "rule": "the attempts of cut runs count"})
    await ctx.token.sleep(delay_s)


async def run_executable(exe: Executable, ctx: ExecContext) -> ExecOutcome:
    """Run `exe` with retries and timeouts; never raises for a failing tool. In a run that
    goes on from cut runs, what they recorded counts (agent/resume.py)."""
    runtime_name = ctx.config.runtime_of(exe.runtime)
    runtime = ctx.config.plugins.runtime(runtime_name)
    if runtime is None:
        return ExecOutcome("ERROR", f"Execution of service `{exe.service_id}' failed: unsupported "
                           f"runtime `{runtime_name}' (supported: "
                           f"{', '.join(ctx.config.plugins.runtime_names())})")
    if ctx.token.cancelled:
        return ExecOutcome("CANCELLED")
    resume = resume_point(exe, ctx.history, utcnow()) if ctx.history else FRESH
    if resume.ended is not None:
        return _ended(exe, *resume.ended)
    loop = asyncio.get_running_loop()
    config = ctx.config
    deadline_at = None
    if exe.deadline is not None:  # counted from the first attempt, also one of a cut run
        spent_s = 0.0 if resume.first_start is None else max(
            (utcnow() - resume.first_start).total_seconds(), 0.0)
        deadline_at = loop.time() + exe.deadline.timeout / 1000 - spent_s
    limits = Limits(
        runtime_ms=None if exe.max_runtime is None else exe.max_runtime.timeout,
        inactivity_ms=None if exe.max_inactivity is None else exe.max_inactivity.timeout,
        deadline_at=deadline_at)
    last_exit: list[int | None] = [resume.last_exit]

    def on_lines(lines: list[str]) -> None:
        ctx.on_lines(exe, lines)

    async def attempt(number: int) -> RunResult:
        env = attempt_environment(ctx.base_env, exe)  # + what the service declares
        steepy_env = {
            "STEEPY_SUBMISSION_ID": ctx.submission_id, "STEEPY_PROCESS_CHAIN_ID": ctx.chain_id,
            "STEEPY_RUN_NUMBER": str(ctx.run_number), "STEEPY_EXECUTABLE_ID": exe.id,
            "STEEPY_ATTEMPT": str(number),
            "STEEPY_LAST_EXIT_CODE": "" if last_exit[0] is None else str(last_exit[0]),
        }
        env.update(steepy_env)
        launch, problem = _launch(runtime, runtime_name, exe, ctx, env, list(steepy_env))
        if ctx.on_attempt is not None:
            ctx.on_attempt(exe, number)
        record = AttemptRecord(exe.id, exe.service_id, number, start_time=utcnow(),
                               outcome=RUNNING, fallback_for=exe.fallback_for,
                               ordinal=len(ctx.records), host=HOST)
        _where(record)
        ctx.records.append(record)
        # with a retry policy, the attempt is spent once it is stored: before its tool runs
        try:
            await ctx.store(record, exe.retries is not None)
        except Cancelled:  # it could not be stored (the engine stops): it does not start
            record.outcome, record.end_time = CANCELLED, utcnow()
            record.message = "not started: its record could not be stored"
            raise
        try:
            return await _attempt(number, record, launch, problem, env)
        finally:  # a failure of a counted attempt is stored before anything goes on
            await ctx.store(record, exe.retries is not None
                            and record.outcome not in (SUCCESS, RUNNING))

    def placed(record: AttemptRecord, pgid: int) -> None:
        """The tool runs: its process group goes with the next transaction (a counted
        attempt's row was stored before it started; others' are stored soon anyway)."""
        _where(record, pgid)
        if exe.retries is not None:
            loop.create_task(ctx.store(record, False))

    async def _attempt(number: int, record: AttemptRecord, launch: Launch, problem: str | None,
                       env: dict[str, str]) -> RunResult:
        argv = launch.argv
        if problem is None and launch.prepare is not None:
            try:
                await launch.prepare()
            except Exception as e:
                log.exception("runtime `%s' could not prepare service `%s'", runtime_name,
                              exe.service_id)
                problem = f"runtime `{runtime_name}' cannot start it: {type(e).__name__}: {e}"
        if problem is not None:
            result = RunResult(spawn_error=problem)
        else:
            try:
                result = await run_process(
                    argv, env=env, cwd=config.workdir, limits=limits, token=ctx.token,
                    on_lines=on_lines, keep_lines=config.output_lines_to_collect,
                    grace_ms=config.kill_grace_period_ms, on_kill=launch.stop,
                    on_started=lambda pgid: placed(record, pgid))
            finally:
                await _clean_up(exe, launch)
        record.end_time = utcnow()
        record.exit_code, record.signal = result.exit_code, result.signal
        record.last_lines = result.last_lines
        if result.ok:
            record.outcome = SUCCESS
            return result
        if result.cancelled:
            record.outcome, record.message = CANCELLED, "cancelled"
            raise Cancelled()
        if result.timeout_kind is not None:
            record.outcome = TIMEOUT
            record.timeout_kind = TIMEOUT_WORDS[result.timeout_kind]
            message = timeout_message(exe, result.timeout_kind, _policy_of(exe, result.timeout_kind))
        else:
            record.outcome = FAILED
            message = failure_message(exe, argv, result, await _explain(launch, runtime_name))
        record.message = message
        last_exit[0] = result.exit_code
        reason = None if exe.retries is None else exe.retries.requeue_reason(
            result.exit_code, result.last_lines, result.timeout_kind)
        if reason is not None:
            record.outcome = REQUEUED
            raise Requeued(message, reason, result, record)
        ctx.emit("attempt-failed", {
            "chainId": ctx.chain_id, "executableId": exe.id, "serviceId": exe.service_id,
            "attempt": number, "outcome": record.outcome, "exitCode": result.exit_code,
            "signal": result.signal, "timeoutKind": record.timeout_kind, "message": message})
        raise Failure(message, result.timeout_kind, result, record)

    def retryable(error: Exception) -> tuple[bool, str]:
        if not isinstance(error, Failure) or error.result is None or exe.retries is None:
            return False, "not an attempt failure"
        r = error.result
        allowed, reason = exe.retries.should_retry(r.exit_code, r.last_lines, r.timeout_kind, False)
        if not allowed and error.record is not None:
            error.record.delay_rule = f"no retry: {reason}"
        return allowed, reason

    async def pause(performed: int, delay_ms: int, error: Exception, reason: str) -> None:
        record = error.record if isinstance(error, Failure) else None
        if ctx.token.cancelled:
            raise Cancelled()
        if deadline_at is not None and loop.time() + delay_ms / 1000 >= deadline_at:
            # deadline-aware waiting: do not sleep into a deadline (extensions section 2)
            if record is not None:
                record.delay_rule = (f"no retry: the deadline passes before attempt "
                                     f"{performed + 1} could start after {delay_ms} ms")
            raise Failure(timeout_message(exe, DEADLINE, exe.deadline), DEADLINE)
        assert exe.retries is not None
        rule = f"{exe.retries.describe_delay_rule()}; {reason}"
        if record is not None:  # the pause is stored before it begins: it survives a crash
            record.delay_ms, record.delay_rule = delay_ms, rule
            record.due_time = utcnow() + timedelta(milliseconds=delay_ms)
            await ctx.store(record, True)
        ctx.emit("retry-scheduled", {
            "chainId": ctx.chain_id, "executableId": exe.id, "serviceId": exe.service_id,
            "attempt": performed + 1, "delayMs": delay_ms,
            "at": utcnow() + timedelta(milliseconds=delay_ms), "reason": reason, "rule": rule})
        await ctx.token.sleep(delay_ms / 1000)

    async def requeue(number: int, error: Exception) -> bool:
        """Extensions 11: wait the rule's delay, bounded by the deadline, and run `number' again."""
        if not isinstance(error, Requeued):
            return False
        assert exe.retries is not None and exe.retries.requeue is not None
        delay_ms = exe.retries.requeue.delay
        record = error.record
        assert record is not None
        if ctx.token.cancelled:
            raise Cancelled()
        if deadline_at is not None and loop.time() + delay_ms / 1000 >= deadline_at:
            record.delay_rule = (f"no re-queue: the deadline passes before attempt {number} "
                                 f"could run again after {delay_ms} ms; {error.reason}")
            raise Failure(timeout_message(exe, DEADLINE, exe.deadline), DEADLINE)
        rule = f"{exe.retries.requeue.describe()}; {error.reason}"
        record.delay_ms, record.delay_rule = delay_ms, rule
        record.due_time = utcnow() + timedelta(milliseconds=delay_ms)
        await ctx.store(record, True)
        ctx.emit("attempt-requeued", {
            "chainId": ctx.chain_id, "executableId": exe.id, "serviceId": exe.service_id,
            "attempt": number, "exitCode": record.exit_code, "delayMs": delay_ms,
            "at": utcnow() + timedelta(milliseconds=delay_ms), "reason": error.reason,
            "message": error.message})
        await ctx.token.sleep(delay_ms / 1000)
        return True

    async def go_on() -> object:
        if not resume.fresh:
            await _wait_to_go_on(exe, ctx, resume, deadline_at)
        return await with_retries(attempt, exe.retries, retryable=retryable, pause=pause,
                                  rng=ctx.rng, requeue=requeue, performed=resume.performed)

    try:
        outcome = await go_on()
    except Cancelled:
        return ExecOutcome("CANCELLED")
    except Failure as failure:
        record = failure.record
        if record is not None and record.delay_rule is None and exe.retries is not None:
            record.delay_rule = f"no retry: all {exe.retries.max_attempts} attempts used"
        if failure.timeout_kind is None:
            return ExecOutcome("ERROR", failure.message)
        error = _policy_of(exe, failure.timeout_kind).error_on_timeout
        return ExecOutcome("ERROR" if error else "CANCELLED", failure.message)
    if outcome is SKIPPED_RESULT:
        now = utcnow()
        ctx.records.append(AttemptRecord(exe.id, exe.service_id, 0, start_time=now, end_time=now,
                                         outcome=SKIPPED, message="maxAttempts is 0",
                                         fallback_for=exe.fallback_for))
        return ExecOutcome("SKIPPED")
    return ExecOutcome("SUCCESS")
