"""What becomes of a process chain after a run (reference 6, extensions 9 and 11): the
decision as a value.

`decide` is pure: given the chain's retry policy, the run's count, how the run ended and the
time, it returns a `RetryDecision`; the scheduler records what it says (the chain's next
status and, when it pauses, when it is due again) and does nothing else of its own. The
decisions, in order:

- the run did not fail (SUCCESS, CANCELLED): `FINISH`, the chain ends with the run's status;
- a `requeue` rule matches the failure: `REQUEUE`, paused for the rule's delay, the run not
  counted as an attempt;
- attempts are left and `retryOn`/`abortOn` (if any) allow it: `RETRY`, paused for the
  policy's delay after the attempts counted so far;
- otherwise `GIVE_UP`: the chain ends in ERROR (`reason` says why when a condition forbade
  the retry).

There is no chain-level fallback: an executable's fallback (extensions 10) runs inside the
run, on the agent, and the run's outcome already includes it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime
from enum import Enum

from steepy.model.durations import later
from steepy.model.policies import RetryPolicy, TimeoutKind
from steepy.model.submission import ProcessChainStatus as CS


class Action(str, Enum):
    FINISH = "finish"  # the run did not fail: the chain takes its status
    RETRY = "retry"  # paused, due again after the policy's delay
    REQUEUE = "requeue"  # paused for a requeue rule's delay; the run does not count
    GIVE_UP = "give up"  # the chain ends in ERROR


@dataclass(frozen=True)
class RunFailure:
    """The failure that ended a run: the last failed attempt's exit code, last output lines
    and timeout kind, each None if unknown."""

    exit_code: int | None = None
    last_lines: tuple[str, ...] = ()
    timeout_kind: TimeoutKind | None = None


@dataclass(frozen=True)
class RetryDecision:
    """The chain's next status, when a PAUSED chain is due again, why a requeue took the run
    back (`requeued`), and why a failure is not retried (`reason`)."""

    action: Action
    status: CS
    resume_at: datetime | None = None
    delay_ms: int = 0
    requeued: str | None = None
    reason: str | None = None


def decide(policy: RetryPolicy | None, counted_runs: int, status: CS, failure: RunFailure,
           now: datetime, rng: random.Random | None = None) -> RetryDecision:
    """The decision after a run that ended with `status`; `counted_runs` is the number of the
    chain's runs that count as attempts, this one included (requeued runs do not)."""
    if status != CS.ERROR:
        return RetryDecision(Action.FINISH, status)
    if policy is None:
        return RetryDecision(Action.GIVE_UP, status)
    failed = (failure.exit_code, list(failure.last_lines), failure.timeout_kind)
    requeued = policy.requeue_reason(*failed)
    if requeued is not None and policy.requeue is not None:
        delay = policy.requeue.delay
        return RetryDecision(Action.REQUEUE, CS.PAUSED, later(now, delay), delay, requeued)
    if not policy.attempts_left(counted_runs):
        return RetryDecision(Action.GIVE_UP, status, reason="no attempts left")
    if policy.retry_on is not None or policy.abort_on is not None:
        allowed, reason = policy.should_retry(*failed, cancelled=False)
        if not allowed:
            return RetryDecision(Action.GIVE_UP, status, reason=reason)
    delay = policy.retry_delay(counted_runs, rng)
    return RetryDecision(Action.RETRY, CS.PAUSED, later(now, delay), delay)
