"""The retry loop around one operation (reference section 6, retry-delays.yaml `retry_loop`),
with hooks as in tenacity's `Retrying`.

Attempts are counted from 1. A failure is an ordinary exception; `Cancelled` (and the caller's
own task cancellation) is never retried and ends the loop at once. When no attempt is left, or
the failure is not retryable, the exception of the last attempt propagates. `maxAttempts` 0
runs nothing and returns `SKIPPED`; no policy means exactly one attempt. A failure that
`requeue` takes (extensions 11; without a policy too) is not counted: the same attempt number
runs again.

The loop gives up when the policy's limits say so (`RetryPolicy.gives_up`): maxAttempts, and
maxElapsed counted from when attempt 1 began to when the next attempt would begin (after the
pause). In a run that goes on from cut runs, attempt 1 began when its record says, not when
this process started; the caller passes that time as `first_start`. A running attempt is never
cut by maxElapsed. `gave_up(error, reason)` hears why before the error propagates.

Between two attempts the loop calls `before_sleep(state)` (it may raise: a cancellation, a
deadline that would pass) and then `sleep(seconds)`; the default sleep is the injected
clock's, so the loop runs in virtual time under a test's clock.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime
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
GaveUp = Callable[[Exception, str], None]
# (the failure, attempts counted, ms since attempt 1 began) -> the pause (ms), None: give up
Choose = Callable[[Exception, int, int], "int | None"]
Sleep = Callable[[float], Awaitable[None]]


def _always(error: Exception) -> tuple[bool, str]:
    return True, ""


def _never(error: Exception) -> int | None:
    return None


async def _nothing(state: RetryState) -> None:
    return None


def _ignore(error: Exception, reason: str) -> None:
    return None


class Retrying(Generic[T]):
    """Runs `operation(attempt)` under `policy` until it returns.

    `retryable` may refuse to retry a failure (retryOn / abortOn, deadline timeouts);
    `requeue` may take a failure back without counting it; `before_sleep` hears of every pause
    before it begins and may end the loop by raising; `sleep` waits (default: `clock`'s sleep;
    a pause of 0 is no sleep then); `rng` draws the policy's jitter; `choose`, where given,
    picks the pause instead of the policy (a `retryPolicy' plugin; None from it gives up)."""

    def __init__(self, policy: RetryPolicy | None, *, retryable: Retryable = _always,
                 requeue: Requeue = _never, before_sleep: BeforeSleep = _nothing,
                 sleep: Sleep | None = None, rng: random.Random | None = None,
                 clock: Clock = SYSTEM, gave_up: GaveUp = _ignore,
                 choose: Choose | None = None) -> None:
        self.policy, self.retryable, self.requeue = policy, retryable, requeue
        self.before_sleep, self.rng, self.clock = before_sleep, rng, clock
        self.gave_up, self.choose = gave_up, choose
        self.sleep = sleep if sleep is not None else self._sleep

    async def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            await self.clock.sleep(seconds)

    async def __call__(self, operation: Callable[[int], Awaitable[T]], performed: int = 0,
                       first_start: datetime | None = None) -> T | _Skipped:
        """The operation's result, going on after `performed` attempts made before (by runs
        that were cut) that count; attempt 1 began at `first_start` (None: now)."""
        if self.policy is not None and self.policy.max_attempts == 0:
            return SKIPPED
        first = first_start if first_start is not None else self.clock.now()
        while True:
            try:
                return await operation(performed + 1)
            except Cancelled:
                raise
            except Exception as error:
                state = self._after(error, performed, first)
            performed = state.performed
            await self.before_sleep(state)
            await self.sleep(state.delay_ms / 1000)

    def _after(self, error: Exception, performed: int, first: datetime) -> RetryState:
        """The pause after `error` failed attempt `performed + 1`; raises `error` when the loop
        ends with it."""
        policy = self.policy
        requeue_ms = self.requeue(error)
        if requeue_ms is not None:  # (also without a policy: the tool's signal, extensions 11)
            return RetryState(performed + 1, performed, error, requeue_ms, requeued=True)
        if policy is None:
            raise error
        performed += 1
        delay = elapsed_ms = None  # drawn only when needed: a seeded rng's draws stay put
        if policy.max_elapsed is not None:
            delay = self._delay(error, performed, first)
            elapsed_ms = round((self.clock.now() - first).total_seconds() * 1000) + delay
        stop = policy.gives_up(performed, elapsed_ms or 0)
        if stop is not None:
            self.gave_up(error, stop)
            raise error
        allowed, reason = self.retryable(error)
        if not allowed:
            raise error
        if delay is None:
            delay = self._delay(error, performed, first)
        return RetryState(performed, performed, error, delay, reason)

    def _delay(self, error: Exception, performed: int, first: datetime) -> int:
        """The pause after `performed` attempts: the policy's, or the one `choose` picks
        (raises `error` when it gives up)."""
        assert self.policy is not None
        if self.choose is None:
            return self.policy.retry_delay(performed, self.rng)
        spent_ms = round((self.clock.now() - first).total_seconds() * 1000)
        delay = self.choose(error, performed, spent_ms)
        if delay is None:
            raise error
        return delay
