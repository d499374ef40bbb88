"""A `retryPolicy' plugin deciding the pauses of one executable (extensions 1): after each
failed attempt the retry loop (agent/retry.py) asks `next(elapsed_ms, attempts, failure)' of
the plugin its policy names (`plugin: NAME') for the pause in ms, or None to give up.

The policy's limits (maxAttempts, maxElapsed), retryOn and abortOn, the deadline and a cancel
still apply. A plugin that raises, or answers something that is no whole number of ms >= 0,
ends the executable: the attempt's failure stands, and its message says which plugin failed
and how. An attempt cut by a crash is a failure to the plugin too (`after_cut': the run that
goes on from it asks before its next attempt).
"""

from __future__ import annotations

import logging

from steepy.agent.attempt import Failure
from steepy.agent.context import ExecContext
from steepy.errors import SteepyError
from steepy.model.attempt import FAILED, TIMEOUT, AttemptRecord
from steepy.model.processchain import Executable
from steepy.plugins.kinds import RetryFailure

__all__ = ["PluginChoice"]

log = logging.getLogger(__name__)


class PluginChoice:
    """The retry loop's `choose' hook for an executable whose policy names a plugin."""

    def __init__(self, exe: Executable, ctx: ExecContext, name: str) -> None:
        self.exe, self.ctx, self.name = exe, ctx, name

    def after_cut(self, record: AttemptRecord, attempts: int, elapsed_ms: int) -> int | str:
        """The pause before the attempt after `record', which a crash cut (agent/resume.py),
        or why none follows."""
        failed = record.outcome in (FAILED, TIMEOUT) and record.message  # (not cut: decided
        failure = RetryFailure(  # again after its engine stopped before storing its pause)
            exit_code=record.exit_code, timeout_kind=record.timeout_kind if failed else None,
            last_lines=tuple(record.last_lines), message=record.message if failed else (
                f"Execution of service `{self.exe.service_id}' failed: "
                f"attempt {record.attempt} was cut ({record.outcome})"))
        try:
            delay = self._ask(failure, attempts, elapsed_ms)
        except _PluginFailed as e:
            return e.said
        return f"retry policy plugin `{self.name}' gave up" if delay is None else delay

    def __call__(self, error: Exception, attempts: int, elapsed_ms: int) -> int | None:
        if not isinstance(error, Failure):  # (not a failed attempt: nothing to decide)
            return None
        try:
            delay = self._ask(_failure(error), attempts, elapsed_ms)
        except _PluginFailed as e:
            raise self._failed(error, e.said) from e.__cause__
        if delay is None and error.record is not None:
            error.record.delay_rule = f"no retry: retry policy plugin `{self.name}' gave up"
        return delay

    def _ask(self, failure: RetryFailure, attempts: int, elapsed_ms: int) -> int | None:
        """The plugin's answer; raises `_PluginFailed' when it fails or answers nonsense."""
        next_delay = self.ctx.config.plugins.retry_policy(self.name)
        try:
            if next_delay is None:
                raise LookupError("no retryPolicy plugin of that name is loaded")
            delay = next_delay(elapsed_ms, attempts, failure)
            if delay is not None and (isinstance(delay, bool) or not isinstance(delay, int)
                                      or delay < 0):
                raise TypeError(f"next() gave {delay!r}, not a number of ms >= 0 or None")
        except Exception as e:
            log.exception("retry policy plugin `%s' failed for service `%s'", self.name,
                          self.exe.service_id)
            raise _PluginFailed(
                f"retry policy plugin `{self.name}' failed: {type(e).__name__}: {e}") from e
        return delay

    def _failed(self, error: Failure, said: str) -> Failure:
        if error.record is not None:
            error.record.delay_rule = f"no retry: {said}"
        return Failure(f"{error.message}\n{said[0].upper()}{said[1:]}", error.timeout_kind,
                       error.result, error.record)


class _PluginFailed(SteepyError):
    def __init__(self, said: str) -> None:
        super().__init__(said)
        self.said = said


def _failure(error: Failure) -> RetryFailure:
    result = error.result
    return RetryFailure(
        exit_code=None if result is None else result.exit_code,
        timeout_kind=None if error.timeout_kind is None else error.timeout_kind.words,
        last_lines=tuple(() if result is None else result.last_lines), message=error.message)
