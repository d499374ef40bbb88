"""What becomes of a chain after a run, decided by a pure function into a value
(steepy/model/chainretry.py): no database, no scheduler, no clock but the one passed in."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

import pytest

from steepy.model import RetryPolicy
from steepy.model.chainretry import Action, RetryDecision, RunFailure, decide
from steepy.model.submission import ProcessChainStatus as CS

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)
EXIT_3 = RunFailure(exit_code=3, last_lines=("boom",))
INACTIVE = RunFailure(timeout_kind="maxInactivity")
DEADLINE = RunFailure(timeout_kind="deadline")
LATER = RunFailure(exit_code=75, last_lines=("try again later",))


def _policy(**fields) -> RetryPolicy:
    return RetryPolicy.from_json({"maxAttempts": 3, "delay": "1h", **fields})


@pytest.mark.parametrize("policy, counted, status, failure, action, next_status, delay_ms", [
    # the run did not fail: the chain takes its status, whatever the policy
    (_policy(), 1, CS.SUCCESS, RunFailure(), Action.FINISH, CS.SUCCESS, 0),
    (_policy(), 1, CS.CANCELLED, RunFailure(), Action.FINISH, CS.CANCELLED, 0),
    # no policy: a failure is final
    (None, 1, CS.ERROR, EXIT_3, Action.GIVE_UP, CS.ERROR, 0),
    # attempts left: paused for the policy's delay (exponential: 1 h, then 2 h)
    (_policy(), 1, CS.ERROR, EXIT_3, Action.RETRY, CS.PAUSED, 3_600_000),
    (_policy(exponentialBackoff=2), 2, CS.ERROR, EXIT_3, Action.RETRY, CS.PAUSED, 7_200_000),
    (_policy(exponentialBackoff=2, maxDelay="90m"), 2, CS.ERROR, EXIT_3, Action.RETRY,
     CS.PAUSED, 5_400_000),
    # the last attempt failed
    (_policy(), 3, CS.ERROR, EXIT_3, Action.GIVE_UP, CS.ERROR, 0),
    # unlimited attempts
    (_policy(maxAttempts=-1), 50, CS.ERROR, EXIT_3, Action.RETRY, CS.PAUSED, 3_600_000),
    # retryOn / abortOn decide by the failure
    (_policy(retryOn={"exitCodes": [3]}), 1, CS.ERROR, EXIT_3, Action.RETRY, CS.PAUSED,
     3_600_000),
    (_policy(retryOn={"exitCodes": [4]}), 1, CS.ERROR, EXIT_3, Action.GIVE_UP, CS.ERROR, 0),
    (_policy(abortOn={"output": "boom"}), 1, CS.ERROR, EXIT_3, Action.GIVE_UP, CS.ERROR, 0),
    (_policy(retryOn={"timeouts": ["maxInactivity"]}), 1, CS.ERROR, INACTIVE, Action.RETRY,
     CS.PAUSED, 3_600_000),
    (_policy(retryOn={"timeouts": ["maxInactivity"]}), 1, CS.ERROR, DEADLINE, Action.GIVE_UP,
     CS.ERROR, 0),
    # a requeue rule takes the run back for its own delay, also with no attempts left
    (_policy(requeue={"exitCodes": [75], "delay": "5m"}), 1, CS.ERROR, LATER, Action.REQUEUE,
     CS.PAUSED, 300_000),
    (_policy(requeue={"exitCodes": [75], "delay": "5m"}), 3, CS.ERROR, LATER, Action.REQUEUE,
     CS.PAUSED, 300_000),
    # ... but not a failure it does not match, nor a timeout
    (_policy(requeue={"exitCodes": [75], "delay": "5m"}), 1, CS.ERROR, EXIT_3, Action.RETRY,
     CS.PAUSED, 3_600_000),
    (_policy(requeue={"output": "later", "delay": "5m"}), 1, CS.ERROR, INACTIVE, Action.RETRY,
     CS.PAUSED, 3_600_000),
])
def test_the_decision_table(policy, counted, status, failure, action, next_status,
                            delay_ms) -> None:
    decision = decide(policy, counted, status, failure, NOW)
    assert (decision.action, decision.status, decision.delay_ms) == (action, next_status,
                                                                     delay_ms)
    if next_status == CS.PAUSED:
        assert decision.resume_at == NOW + timedelta(milliseconds=delay_ms)
    else:
        assert decision.resume_at is None
    assert (decision.requeued is not None) == (action == Action.REQUEUE)


def test_reasons_say_why_a_failure_is_not_retried() -> None:
    assert "retryOn did not match" in decide(_policy(retryOn={"exitCodes": [4]}), 1, CS.ERROR,
                                             EXIT_3, NOW).reason
    assert "abortOn matched" in decide(_policy(abortOn={"exitCodes": [3]}), 1, CS.ERROR, EXIT_3,
                                       NOW).reason
    assert decide(_policy(), 3, CS.ERROR, EXIT_3, NOW).reason == "no attempts left"
    requeue = decide(_policy(requeue={"exitCodes": [75]}), 1, CS.ERROR, LATER, NOW)
    assert requeue.requeued == "requeue matched exit code 75" and requeue.reason is None


def test_jitter_comes_from_the_random_source_passed_in() -> None:
    policy = _policy(jitter="full")
    first = decide(policy, 1, CS.ERROR, EXIT_3, NOW, random.Random(7))
    again = decide(policy, 1, CS.ERROR, EXIT_3, NOW, random.Random(7))
    assert first == again and 0 <= first.delay_ms <= 3_600_000


def test_a_decision_is_a_frozen_value() -> None:
    decision = decide(_policy(), 1, CS.ERROR, EXIT_3, NOW)
    assert decision == RetryDecision(Action.RETRY, CS.PAUSED, NOW + timedelta(hours=1),
                                     3_600_000)
    with pytest.raises(AttributeError):
        decision.status = CS.ERROR  # type: ignore[misc]


@pytest.mark.parametrize("fields", [{"delay": 2**63 - 1}, {"delay": "3000000d"},
                                    {"exponentialBackoff": 10, "maxAttempts": 50},
                                    {"requeue": {"exitCodes": [3], "delay": "3000000d"}}])
def test_a_delay_beyond_the_longest_duration_pauses_for_the_longest(fields) -> None:
    """An old database may hold what validation now refuses; backoff may grow past it: the
    chain is paused for 3650 days, never an OverflowError that stops the engine."""
    decision = decide(_policy(**fields), 20 if "maxAttempts" in fields else 1, CS.ERROR,
                      EXIT_3, NOW)
    assert decision.status == CS.PAUSED
    assert decision.resume_at == NOW + timedelta(days=3650)
