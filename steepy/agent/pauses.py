"""The pauses between the attempts of one executable: the retry loop's hooks (agent/retry.py).

They decide whether a failure is retried (`retryOn`, `abortOn`) or re-queued (`requeue`, or
the tool's signal: extensions 11); before a pause begins they keep it within the deadline (a
pause that would outlast it ends the executable instead: deadline-aware waiting, extensions
section 2), store it with the attempt (its due time survives a crash: agent/resume.py goes on
from it) and announce it; the pause itself is a sleep on the context's clock that a cancel ends at once.
"""

from __future__ import annotations

import logging

from steepy.agent.attempt import Executing, Failure, Requeued
from steepy.agent.cancel import Cancelled
from steepy.agent.resume import Resume
from steepy.agent.retry import RetryState
from steepy.events import EventKind
from steepy.model.durations import MAX_DURATION_MS, later

log = logging.getLogger(__name__)


class Pauses:
    """The hooks of the retry loop of one executable."""

    def __init__(self, shared: Executing) -> None:
        self.shared = shared

    def retryable(self, error: Exception) -> tuple[bool, str]:
        exe = self.shared.exe
        if not isinstance(error, Failure) or error.result is None or exe.retries is None:
            return False, "not an attempt failure"
        r = error.result
        allowed, reason = exe.retries.should_retry(r.exit_code, r.last_lines, r.timeout_kind, False)
        if not allowed and error.record is not None:
            error.record.delay_rule = f"no retry: {reason}"
        return allowed, reason

    def gave_up(self, error: Exception, reason: str) -> None:
        """The policy's limits end the executable: say which in the failed attempt's record."""
        if isinstance(error, Failure) and error.record is not None:
            error.record.delay_rule = f"no retry: {reason}"

    def requeue_delay(self, error: Exception) -> int | None:
        """The delay (ms) after which a failure the policy's `requeue` (or the tool's signal)
        took runs again."""
        return error.delay_ms if isinstance(error, Requeued) else None

    async def before_sleep(self, state: RetryState) -> None:
        """Within the deadline, stored, announced; raises `Cancelled` for a cancelled chain and
        `Failure` when the deadline would pass during the pause."""
        if self.shared.ctx.token.cancelled:
            raise Cancelled()
        if state.requeued:
            await self._requeue(state)
        else:
            await self._retry(state)

    async def sleep(self, seconds: float) -> None:
        ctx = self.shared.ctx  # a pause never outlasts the longest duration (as `later')
        await ctx.token.sleep(min(seconds, MAX_DURATION_MS / 1000), ctx.clock)

    async def _retry(self, state: RetryState) -> None:
        shared = self.shared
        exe, ctx, delay_ms = shared.exe, shared.ctx, state.delay_ms
        record = state.error.record if isinstance(state.error, Failure) else None
        if shared.deadline_passes_within(delay_ms):
            if record is not None:
                record.delay_rule = (f"no retry: the deadline passes before attempt "
                                     f"{state.performed + 1} could start after {delay_ms} ms")
            raise shared.deadline_failure()
        assert exe.retries is not None
        chosen = (f"retry policy plugin `{exe.retries.plugin}'" if exe.retries.plugin
                  else exe.retries.describe_delay_rule())
        rule = f"{chosen}; {state.reason}"
        if record is not None:  # the pause is stored before it begins: it survives a crash
            record.delay_ms, record.delay_rule = delay_ms, rule
            record.due_time = later(ctx.clock.now(), delay_ms)
            await ctx.store(record, True)
        log.info("chain %s: attempt %d of %s failed%s; attempt %d in %.1fs (%s)", ctx.chain_id,
                 state.attempt, exe.service_id, "" if record is None or record.exit_code is None
                 else f" with exit code {record.exit_code}", state.performed + 1,
                 delay_ms / 1000, state.reason or rule)
        ctx.emit(EventKind.CHAIN_RETRY_SCHEDULED, {
            "chainId": ctx.chain_id, "executableId": exe.id, "serviceId": exe.service_id,
            "attempt": state.performed + 1, "delayMs": delay_ms,
            "at": later(ctx.clock.now(), delay_ms), "reason": state.reason,
            "rule": rule})

    async def _requeue(self, state: RetryState) -> None:
        """Extensions 11: the same attempt runs again after the rule's (or the tool's) delay,
        within the deadline."""
        shared = self.shared
        exe, ctx, delay_ms = shared.exe, shared.ctx, state.delay_ms
        error = state.error
        assert isinstance(error, Requeued) and error.record is not None
        record = error.record
        if shared.deadline_passes_within(delay_ms):
            record.delay_rule = (f"no re-queue: the deadline passes before attempt "
                                 f"{state.attempt} could run again after {delay_ms} ms; "
                                 f"{error.reason}")
            raise shared.deadline_failure()
        rule = f"{error.rule}; {error.reason}"
        record.delay_ms, record.delay_rule = delay_ms, rule
        record.due_time = later(ctx.clock.now(), delay_ms)
        await ctx.store(record, True)
        log.info("chain %s: attempt %d of %s re-queued; again in %.1fs (%s)", ctx.chain_id,
                 state.attempt, exe.service_id, delay_ms / 1000, error.reason)
        ctx.emit(EventKind.CHAIN_ATTEMPT_REQUEUED, {
            "chainId": ctx.chain_id, "executableId": exe.id, "serviceId": exe.service_id,
            "attempt": state.attempt, "exitCode": record.exit_code, "delayMs": delay_ms,
            "at": later(ctx.clock.now(), delay_ms), "reason": error.reason,
            "message": error.message})

    async def go_on_after(self, resume: Resume) -> None:
        """Before an executable goes on from a cut run: the rest of its pause, within its
        deadline (raises `Failure` when the deadline would pass, `Cancelled`)."""
        shared = self.shared
        exe, ctx = shared.exe, shared.ctx
        delay_s = 0.0 if resume.due is None else max(
            (resume.due - ctx.clock.now()).total_seconds(), 0.0)
        if shared.deadline_passes_within(delay_s * 1000):
            raise shared.deadline_failure()
        if ctx.token.cancelled:
            raise Cancelled()
        if resume.due is None:
            return
        ctx.emit(EventKind.CHAIN_RETRY_SCHEDULED, {
            "chainId": ctx.chain_id, "executableId": exe.id, "serviceId": exe.service_id,
            "attempt": resume.performed + 1, "delayMs": round(delay_s * 1000), "at": resume.due,
            "reason": resume.reason, "rule": "the attempts of cut runs count"})
        await self.sleep(delay_s)
