"""One executable of a chain under its policies (reference sections 5 and 6, extensions 1-4).

Nesting: deadline (whole executable, retry pauses and re-queue delays included) > retry loop >
maximum runtime (per attempt) > maximum inactivity (per attempt, restarted by every complete
output line). One attempt is an `Attempt` (agent/attempt.py); the loop around them is
`Retrying` (agent/retry.py) with the executable's pauses as its hooks (agent/pauses.py).
"""

from __future__ import annotations

import asyncio
from typing import Any

from steepy.agent.attempt import Attempt, Executing, Failure
from steepy.agent.cancel import Cancelled
from steepy.agent.config import SKIPPED, SUCCESS, TIMEOUT, AttemptRecord
from steepy.agent.context import ExecContext, ExecOutcome
from steepy.agent.pauses import Pauses
from steepy.agent.process import Limits
from steepy.agent.resume import FRESH, Resume, resume_point
from steepy.agent.retry import SKIPPED as SKIPPED_RESULT
from steepy.agent.retry import Retrying
from steepy.agent.retryplugin import PluginChoice
from steepy.agent.signals import PrunedByTool
from steepy.model.attempt import PRUNED
from steepy.model.policies import TimeoutKind
from steepy.model.processchain import Executable

__all__ = ["run_executable"]


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
    plugin = None if exe.retries is None or exe.retries.plugin is None else PluginChoice(
        exe, ctx, exe.retries.plugin)
    resume = FRESH if not ctx.history else resume_point(
        exe, ctx.history, ctx.clock.now(), None if plugin is None else plugin.after_cut)
    if resume.ended is not None:
        return _ended(exe, *resume.ended)
    shared = _executing(exe, ctx, runtime_name, runtime, resume)
    try:
        outcome = await _attempts(shared, resume, plugin)
    except Cancelled:
        return ExecOutcome("CANCELLED")
    except PrunedByTool as pruned:  # the chain ends here, not in error (extensions 11)
        return ExecOutcome("PRUNED", str(pruned))
    except Failure as failure:
        ended = _failed(exe, failure)
        if failure.record is not None and exe.retries is not None:
            # stored now, with why no retry follows: a fallback (or the workflow's catch) may
            # run long before the chain's end stores it, and an engine taking over after a
            # crash decides again a failure stored without it (agent/resume.py)
            try:
                await ctx.store(failure.record, True)
            except Cancelled:  # (the engine stops: decided again by the next, the same way)
                pass
        return ended
    if outcome is SKIPPED_RESULT:
        now = ctx.clock.now()
        ctx.records.append(AttemptRecord(exe.id, exe.service_id, 0, start_time=now, end_time=now,
                                         outcome=SKIPPED, message="maxAttempts is 0",
                                         fallback_for=exe.fallback_for))
        return ExecOutcome("SKIPPED")
    return ExecOutcome("SUCCESS")


def _executing(exe: Executable, ctx: ExecContext, runtime_name: str, runtime: Any,
               resume: Resume) -> Executing:
    """What the attempts share; the deadline counts from the first attempt, also one of a
    cut run."""
    deadline_at = loop_deadline_at = None
    if exe.deadline is not None:
        spent_s = 0.0 if resume.first_start is None else max(
            (ctx.clock.now() - resume.first_start).total_seconds(), 0.0)
        left_s = exe.deadline.timeout / 1000 - spent_s
        deadline_at = ctx.clock.monotonic() + left_s
        loop_deadline_at = asyncio.get_running_loop().time() + left_s  # the tool's timers
    limits = Limits(
        runtime_ms=None if exe.max_runtime is None else exe.max_runtime.timeout,
        inactivity_ms=None if exe.max_inactivity is None else exe.max_inactivity.timeout,
        deadline_at=loop_deadline_at)
    return Executing(exe, ctx, runtime_name, runtime, limits, deadline_at, resume.last_exit,
                     resume.last_failure, resume.signal_requeues)


async def _attempts(shared: Executing, resume: Resume, plugin: PluginChoice | None) -> object:
    """The attempts under the retry policy, after the rest of a cut run's pause."""
    pauses = Pauses(shared)
    if not resume.fresh:
        await pauses.go_on_after(resume)
    retrying: Retrying = Retrying(
        shared.exe.retries, retryable=pauses.retryable, requeue=pauses.requeue_delay,
        before_sleep=pauses.before_sleep, sleep=pauses.sleep, rng=shared.ctx.rng,
        clock=shared.ctx.clock, gave_up=pauses.gave_up, choose=plugin)
    return await retrying(lambda number: Attempt(shared, number).run(), resume.performed,
                          resume.first_start)


def _failed(exe: Executable, failure: Failure) -> ExecOutcome:
    """How an executable ends whose last attempt (or the deadline) failed it."""
    record = failure.record
    if record is not None and record.delay_rule is None and exe.retries is not None:
        record.delay_rule = f"no retry: {exe.retries.attempts_used()}"
    if failure.timeout_kind is None:
        return ExecOutcome("ERROR", failure.message)
    error = failure.timeout_kind.policy(exe).error_on_timeout
    return ExecOutcome("ERROR" if error else "CANCELLED", failure.message)


def _ended(exe: Executable, last: AttemptRecord, message: str | None) -> ExecOutcome:
    """How an executable ends that a cut run had already ended (or used up)."""
    if last.outcome in (SUCCESS, SKIPPED):
        return ExecOutcome(last.outcome)
    if last.outcome == PRUNED:
        return ExecOutcome(PRUNED, last.message)
    kind = TimeoutKind.from_words(last.timeout_kind)
    policy = None if kind is None else kind.policy(exe)
    if last.outcome == TIMEOUT and policy is not None and not policy.error_on_timeout:
        return ExecOutcome("CANCELLED", message)
    return ExecOutcome("ERROR", message)
