"""A `retryPolicy' plugin deciding the pauses of one executable (extensions 1): after each
failed attempt the retry loop (agent/retry.py) asks `next(elapsed_ms, attempts, failure)' of
the plugin its policy names (`plugin: NAME') for the pause in ms, or None to give up.

The policy's limits (maxAttempts, maxElapsed), retryOn and abortOn, the deadline and a cancel
still apply. A plugin that raises, or answers something that is no whole number of ms >= 0,
ends the executable: the attempt's failure stands, and its message says which plugin failed
and how.
"""

from __future__ import annotations

import logging

from steepy.agent.attempt import Executing, Failure
from steepy.plugins.kinds import RetryFailure

__all__ = ["PluginChoice"]

log = logging.getLogger(__name__)


class PluginChoice:
    """The retry loop's `choose' hook for an executable whose policy names a plugin."""

    def __init__(self, shared: Executing, name: str) -> None:
        self.shared, self.name = shared, name

    def __call__(self, error: Exception, attempts: int, elapsed_ms: int) -> int | None:
        if not isinstance(error, Failure):  # (not a failed attempt: nothing to decide)
            return None
        next_delay = self.shared.ctx.config.plugins.retry_policy(self.name)
        try:
            if next_delay is None:
                raise LookupError("no retryPolicy plugin of that name is loaded")
            delay = next_delay(elapsed_ms, attempts, _failure(error))
            if delay is not None and (isinstance(delay, bool) or not isinstance(delay, int)
                                      or delay < 0):
                raise TypeError(f"next() gave {delay!r}, not a number of ms >= 0 or None")
        except Exception as e:
            log.exception("retry policy plugin `%s' failed for service `%s'", self.name,
                          self.shared.exe.service_id)
            raise self._failed(error, e) from e
        if delay is None and error.record is not None:
            error.record.delay_rule = f"no retry: retry policy plugin `{self.name}' gave up"
        return delay

    def _failed(self, error: Failure, cause: Exception) -> Failure:
        said = f"retry policy plugin `{self.name}' failed: {type(cause).__name__}: {cause}"
        if error.record is not None:
            error.record.delay_rule = f"no retry: {said}"
        return Failure(f"{error.message}\n{said[0].upper()}{said[1:]}", error.timeout_kind,
                       error.result, error.record)


def _failure(error: Failure) -> RetryFailure:
    result = error.result
    return RetryFailure(
        exit_code=None if result is None else result.exit_code,
        timeout_kind=None if error.timeout_kind is None else error.timeout_kind.words,
        last_lines=tuple(() if result is None else result.last_lines), message=error.message)
