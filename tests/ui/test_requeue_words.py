"""Re-queues (extensions 11) in the UI's words: an attempt row and a timeline line."""

from __future__ import annotations

from steepy.ui.pages.chains import attempt_outcome
from steepy.ui.pages.workflows_events import describe


def test_a_requeued_attempt_says_it_did_not_count() -> None:
    assert attempt_outcome({"outcome": "REQUEUED", "exitCode": 75}) == \
        "re-queued (exit code 75): not counted as an attempt"


def test_a_requeue_event_is_a_timeline_line() -> None:
    line = describe({"id": 3, "time": "2026-11-23T22:00:00Z", "kind": "chain.attemptRequeued",
                     "chainId": "c", "attempt": 1, "serviceId": "flaky", "delayMs": 100,
                     "reason": "requeue matched exit code 75"})
    assert line.text == "Attempt 1 of service flaky re-queued after 100ms (not counted)"
    assert line.tone == "status-waiting" and line.detail == "requeue matched exit code 75"


def test_a_fallback_event_is_a_timeline_line() -> None:
    line = describe({"id": 4, "time": "2026-11-23T22:00:00Z", "kind": "chain.fallbackStarted",
                     "chainId": "c", "executableId": "measure", "serviceId": "flaky",
                     "fallbackId": "measure.fallback", "fallbackServiceId": "stand-in",
                     "exitCode": 3, "message": "Execution of service `flaky' failed"})
    assert line.text == ("Service flaky failed after all its attempts (exit code 3): its "
                         "fallback stand-in runs instead")
    assert line.tone == "status-waiting" and line.detail == "Execution of service `flaky' failed"


def test_a_running_and_a_cut_attempt_say_so() -> None:
    assert attempt_outcome({"outcome": "RUNNING"}) == "running"
    assert attempt_outcome({"outcome": "AGENT_LOST"}) == \
        "cut: its engine was lost; it counts as an attempt spent"
    assert attempt_outcome({"outcome": "INTERRUPTED"}).startswith("cut: its engine stopped")


def test_a_policy_of_one_attempt_is_said_without_a_delay_rule() -> None:
    """`1 attempt; delay exponential 0ms*1^(n-1), jitter none' described a pause that never
    comes (a review of the chain page)."""
    from steepy.model.policies import RetryPolicy
    from steepy.ui.pages.chains import describe_retries

    assert describe_retries(RetryPolicy(max_attempts=1)) == "1 attempt, no retry"
    assert describe_retries(RetryPolicy(max_attempts=0)) == "no attempt (maxAttempts is 0: skipped)"
    assert describe_retries(RetryPolicy(max_attempts=3)).startswith("3 attempts; delay ")
