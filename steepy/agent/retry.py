"""The retry loop around one operation (reference section 6, retry-delays.yaml `retry_loop`).

Attempts are counted from 1. A failure is an ordinary exception; `Cancelled` (and the caller's
own task cancellation) is never retried and ends the loop at once. When no attempt is left, or
the failure is not retryable, the exception of the last attempt propagates. `maxAttempts` 0
runs nothing and returns `SKIPPED`; no policy means exactly one attempt. A failure that
`requeue` takes (extensions 11) is not counted: the same attempt number runs again.
"""

from __future__ import annotations

import asyncio
import random
from typing import Awaitable, Callable, TypeVar

from steepy.agent.cancel import Cancelled
from steepy.model.policies import RetryPolicy

__all__ = ["SKIPPED", "with_retries"]

T = TypeVar("T")


class _Skipped:
    def __repr__(self) -> str:
        return "SKIPPED"


SKIPPED = _Skipped()

# (attempts performed, delay in ms, the failure, why it is retried) -> wait
Pause = Callable[[int, int, Exception, str], Awaitable[None]]
# (attempt number, the failure) -> True after waiting when it is re-queued, False otherwise
Requeue = Callable[[int, Exception], Awaitable[bool]]


async def _sleep(performed: int, delay_ms: int, error: Exception, reason: str) -> None:
    if delay_ms > 0:
        await asyncio.sleep(delay_ms / 1000)


async def with_retries(operation: Callable[[int], Awaitable[T]], policy: RetryPolicy | None, *,
                       retryable: Callable[[Exception], tuple[bool, str]] | None = None,
                       pause: Pause = _sleep, rng: random.Random | None = None,
                       requeue: Requeue | None = None, performed: int = 0) -> T | _Skipped:
    """Run `operation(attempt)` until it returns, under `policy`, going on after `performed`
    attempts made before (by runs that were cut) that count.

    `retryable` may refuse to retry a failure (retryOn / abortOn, deadline timeouts); `pause`
    waits between attempts and may itself raise (cancellation, a deadline that would pass);
    `requeue` may take a failure back without counting it (and raise the same way).
    """
    if policy is None:
        return await operation(1)
    if policy.max_attempts == 0:
        return SKIPPED
    while True:
        try:
            return await operation(performed + 1)
        except Cancelled:
            raise
        except Exception as error:
            if requeue is not None and await requeue(performed + 1, error):
                continue
            performed += 1
            if not policy.attempts_left(performed):
                raise
            allowed, reason = retryable(error) if retryable is not None else (True, "")
            if not allowed:
                raise
            await pause(performed, policy.retry_delay(performed, rng), error, reason)
