"""The retry loop around one operation (reference section 6, retry-delays.yaml `retry_loop`),
with hooks as in tenacity's `Retrying`.

Attempts are counted from 1. A failure is an ordinary exception; `Cancelled` (and the caller's
own task cancellation) is never retried and ends the loop at once. When no attempt is left, or
the failure is not retryable, the exception of the last attempt propagates. `maxAttempts` 0
runs nothing and returns `SKIPPED`; no policy means exactly one attempt. A failure that
`requeue` takes (extensions 11) is not counted: the same attempt number runs again.

Between two attempts the loop calls `before_sleep(state)` (it may raise: a cancellation, a
deadline that would pass) and then `sleep(seconds)`; the default sleep is the injected
clock's, so the loop runs in virtual time under a test's clock.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Awaitable, Callable, Generic, TypeVar

from steepy.agent.cancel import Cancelled
from steepy.model.clock import SYSTEM, Clock
from steepy.model.policies import RetryPolicy

__all__ = ["SKIPPED", "RetryState", "Retrying"]

T = TypeVar("T")


class _Skipped:
    def __repr__(self) -> str:
        return "SKIPPED"


SKIPPED = _Skipped()


@dataclass
class RetryState:
    """Where the loop is when it pauses (tenacity's `RetryCallState`): the attempt that
    failed and how, the attempts counted so far, and the pause before the next one."""

    attempt: int  # the number of the attempt that failed
    performed: int  # attempts counted so far (those of cut runs included)
    error: Exception
    delay_ms: int
    reason: str = ""  # why it is tried again
    requeued: bool = False  # taken back by `requeue`: uncounted, the same number runs again


# the failure -> (whether it may be retried, why)
Retryable = Callable[[Exception], "tuple[bool, str]"]
# the failure -> the delay (ms) after which `requeue` runs the same attempt again, or None
Requeue = Callable[[Exception], "int | None"]
BeforeSleep = Callable[[RetryState], Awaitable[None]]
Sleep = Callable[[float], Awaitable[None]]


def _always(error: Exception) -> tuple[bool, str]:
    return True, ""


def _never(error: Exception) -> int | None:
    return None


async def _nothing(state: RetryState) -> None:
    return None


class Retrying(Generic[T]):
    """Runs `operation(attempt)` under `policy` until it returns.

    `retryable` may refuse to retry a failure (retryOn / abortOn, deadline timeouts);
    `requeue` may take a failure back without counting it; `before_sleep` hears of every pause
    before it begins and may end the loop by raising; `sleep` waits (default: `clock`'s sleep;
    a pause of 0 is no sleep then); `rng` draws the policy's jitter."""

    def __init__(self, policy: RetryPolicy | None, *, retryable: Retryable = _always,
                 requeue: Requeue = _never, before_sleep: BeforeSleep = _nothing,
                 sleep: Sleep | None = None, rng: random.Random | None = None,
                 clock: Clock = SYSTEM) -> None:
        self.policy, self.retryable, self.requeue = policy, retryable, requeue
        self.before_sleep, self.rng, self.clock = before_sleep, rng, clock
        self.sleep = sleep if sleep is not None else self._sleep

    async def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            await self.clock.sleep(seconds)

    async def __call__(self, operation: Callable[[int], Awaitable[T]],
                       performed: int = 0) -> T | _Skipped:
        """The operation's result, going on after `performed` attempts made before (by runs
        that were cut) that count."""
        if self.policy is None:
            return await operation(1)
        if self.policy.max_attempts == 0:
            return SKIPPED
        while True:
            try:
                return await operation(performed + 1)
            except Cancelled:
                raise
            except Exception as error:
                state = self._after(error, performed)
            performed = state.performed
            await self.before_sleep(state)
            await self.sleep(state.delay_ms / 1000)

    def _after(self, error: Exception, performed: int) -> RetryState:
        """The pause after `error` failed attempt `performed + 1`; raises `error` when the loop
        ends with it."""
        policy = self.policy
        assert policy is not None
        requeue_ms = self.requeue(error)
        if requeue_ms is not None:
            return RetryState(performed + 1, performed, error, requeue_ms, requeued=True)
        performed += 1
        if not policy.attempts_left(performed):
            raise error
        allowed, reason = self.retryable(error)
        if not allowed:
            raise error
        return RetryState(performed, performed, error, policy.retry_delay(performed, self.rng),
                          reason)
