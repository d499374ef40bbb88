"""Where an executable goes on after cut runs (agent/resume.py): what they recorded counts."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from steepy.agent.resume import resume_point
from steepy.agent.signals import SIGNAL_REASON
from steepy.model.attempt import (AGENT_LOST, BY_POLICY, BY_TOOL, FAILED, INTERRUPTED, REQUEUED,
                                  SUCCESS, TIMEOUT, AttemptRecord)
from steepy.model.policies import RetryPolicy
from steepy.model.processchain import Executable

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=timezone.utc)


def exe(policy: RetryPolicy | None = RetryPolicy(max_attempts=3, delay=4000),
        exe_id: str = "e") -> Executable:
    return Executable(exe_id, "tool", "svc", retries=policy)


def attempt(number: int, outcome: str, *, at: float = -60, due: float | None = None,
            exit_code: int | None = None, exe_id: str = "e", message: str | None = None,
            ended: float | None = None, rule: str | None = None,
            timeout: str | None = None) -> AttemptRecord:
    return AttemptRecord(exe_id, "svc", number, NOW + timedelta(seconds=at), outcome=outcome,
                         exit_code=exit_code, message=message, delay_rule=rule,
                         timeout_kind=timeout,
                         end_time=None if ended is None else NOW + timedelta(seconds=ended),
                         due_time=None if due is None else NOW + timedelta(seconds=due))


def test_nothing_recorded_starts_afresh() -> None:
    point = resume_point(exe(), [attempt(1, FAILED, exe_id="other", due=5)], NOW)
    assert point.fresh and point.performed == 0


def test_a_pause_that_was_under_way_goes_on_to_its_due_time() -> None:
    point = resume_point(exe(), [attempt(1, FAILED, due=3, exit_code=7)], NOW)
    assert (point.performed, point.due, point.last_exit) == (1, NOW + timedelta(seconds=3), 7)
    assert point.first_start == NOW - timedelta(seconds=60)


@pytest.mark.parametrize("cut", [AGENT_LOST, INTERRUPTED])
def test_a_cut_attempt_is_spent_and_the_next_waits_the_policys_delay(cut: str) -> None:
    point = resume_point(exe(), [attempt(1, FAILED, due=-50), attempt(2, cut)], NOW)
    # attempt 3 is the last the policy allows; its pause is the one after two attempts
    assert point.performed == 2 and point.ended is None
    assert point.due == NOW + timedelta(milliseconds=4000)
    assert "attempt 2 was cut" in point.reason


def test_no_attempt_left_ends_the_executable_with_the_last_message() -> None:
    history = [attempt(1, FAILED, due=-50, message="first"), attempt(2, AGENT_LOST)]
    point = resume_point(exe(RetryPolicy(max_attempts=2)), history, NOW)
    assert point.ended is not None
    last, message = point.ended
    assert last.attempt == 2 and "attempt 2 was cut (AGENT_LOST)" in message
    assert "all 2 attempts used" in message


def test_a_failure_stored_with_why_no_retry_followed_had_ended_the_executable() -> None:
    point = resume_point(exe(), [attempt(1, TIMEOUT, message="timed out",
                                         rule="no retry: retryOn did not match")], NOW)
    assert point.ended is not None and point.ended[1] == "timed out"


def test_a_failure_stored_without_what_followed_is_decided_again() -> None:
    """Its engine stopped after storing the failure, before storing its pause (or why none
    followed): the policy decides again, the pause counted from the failure's end."""
    point = resume_point(exe(), [attempt(1, FAILED, exit_code=1, ended=-3)], NOW)
    assert point.ended is None and point.performed == 1 and point.last_exit == 1
    assert point.due == NOW + timedelta(seconds=1)  # 4 s from 3 s ago
    assert "before its pause was stored" in point.reason


@pytest.mark.parametrize(("policy", "why"), [
    (RetryPolicy(max_attempts=1), "maxAttempts is 1: its only attempt was used"),
    (RetryPolicy.from_json({"maxAttempts": 3, "retryOn": {"exitCodes": [75]}}),
     "no retry: retryOn did not match"),
])
def test_decided_again_a_failure_may_end_the_executable(policy, why) -> None:
    point = resume_point(exe(policy), [attempt(1, FAILED, exit_code=1, ended=-3,
                                               message="exit code 1")], NOW)
    assert point.ended is not None and point.ended[0].attempt == 1
    assert point.ended[1].startswith("exit code 1") and why in point.ended[1]


def test_a_success_is_not_run_again_with_or_without_a_policy() -> None:
    for policy in (None, RetryPolicy(max_attempts=2)):
        point = resume_point(exe(policy), [attempt(1, SUCCESS)], NOW)
        assert point.ended is not None and point.ended[0].outcome == SUCCESS


def test_without_a_policy_a_cut_attempt_runs_again_as_in_steep() -> None:
    assert resume_point(exe(None), [attempt(1, AGENT_LOST)], NOW).fresh


def test_a_requeued_attempt_spends_nothing_and_keeps_its_due_time() -> None:
    history = [attempt(1, FAILED, due=-50), attempt(2, REQUEUED, due=2)]
    point = resume_point(exe(RetryPolicy(max_attempts=2)), history, NOW)
    assert point.ended is None and point.performed == 1
    assert point.due == NOW + timedelta(seconds=2)


def tool_requeue(number: int, *, due: float | None, at: float = -30,
                 by: str = BY_TOOL) -> AttemptRecord:
    record = attempt(number, REQUEUED, at=at, due=due)
    record.requeued_by = by
    record.delay_rule = f"requeue after 5s; {SIGNAL_REASON}"  # (prose: not what decides)
    return record


def test_without_a_policy_a_tools_requeue_keeps_its_due_time_and_count() -> None:
    """One attempt per run (Steep), but a re-queue the tool asked for goes on where it was:
    a kill -9 during its pause must not run the tool early, nor reset its 100 re-queues."""
    history = [tool_requeue(1, due=-20, at=-40), tool_requeue(1, due=4)]
    point = resume_point(exe(None), history, NOW)
    assert (point.due, point.signal_requeues, point.performed) == (
        NOW + timedelta(seconds=4), 2, 0)
    assert point.first_start == NOW - timedelta(seconds=40)  # the deadline counts from there
    assert "was re-queued before its engine stopped" in point.reason
    cut = resume_point(exe(None), [*history, attempt(1, AGENT_LOST)], NOW)
    assert cut.fresh and cut.signal_requeues == 2  # run again now; the count stays


def test_who_requeued_is_read_from_the_record_not_its_words() -> None:
    """A re-queue by the policy's `requeue' is a failure the next attempt is told of; one by
    the tool is not, and counts against the tool's limit."""
    by_policy = tool_requeue(1, due=2, by=BY_POLICY)
    point = resume_point(exe(RetryPolicy(max_attempts=2)), [by_policy], NOW)
    assert (point.last_failure, point.signal_requeues) == (by_policy, 0)
    by_tool = tool_requeue(1, due=2)
    by_tool.delay_rule = "requeue after 5s"
    point = resume_point(exe(RetryPolicy(max_attempts=2)), [by_tool], NOW)
    assert (point.last_failure, point.signal_requeues) == (None, 1)


def test_a_retry_plugin_picks_the_pause_after_a_cut_attempt() -> None:
    asked: list[tuple[int, int, int]] = []

    def choose(cut: AttemptRecord, performed: int, elapsed_ms: int) -> int | str:
        asked.append((cut.attempt, performed, elapsed_ms))
        return 1500 if performed < 2 else "retry policy plugin `p' gave up"

    policy = RetryPolicy.from_json({"plugin": "p"})
    point = resume_point(exe(policy), [attempt(1, AGENT_LOST)], NOW, choose)
    assert point.due == NOW + timedelta(milliseconds=1500) and asked == [(1, 1, 60_000)]
    history = [attempt(1, FAILED, due=-50), attempt(2, INTERRUPTED, at=-10)]
    point = resume_point(exe(policy), history, NOW, choose)
    assert point.ended is not None and point.ended[0].attempt == 2
    assert point.ended[1].endswith(
        "attempt 2 was cut (INTERRUPTED) (retry policy plugin `p' gave up, counting those of "
        "cut runs)")


@pytest.mark.parametrize(("rules", "retried"), [
    ({"abortOn": {"timeouts": ["maxRuntime"]}}, False),
    ({"retryOn": {"timeouts": ["maxRuntime"]}}, True),
])
def test_a_timeout_decided_again_is_matched_by_its_name(rules, retried) -> None:
    """The record keeps the timeout's words (`maximum runtime'); `retryOn' and `abortOn' name
    it as Steep does (`maxRuntime'): decided again after a crash, the same way as live."""
    policy = RetryPolicy.from_json({"maxAttempts": 3, "delay": "4s", **rules})
    point = resume_point(exe(policy), [attempt(1, TIMEOUT, ended=-3, message="timed out",
                                               timeout="maximum runtime")], NOW)
    assert (point.ended is None) == retried, point


def test_max_elapsed_counts_to_when_the_next_attempt_would_begin() -> None:
    """The pause counts from the failure's end: with 9 of the 10 minutes spent when it ended
    and a 1-minute delay, the next attempt is due at once, within maxElapsed."""
    policy = RetryPolicy.from_json({"maxAttempts": 3, "delay": "60s", "maxElapsed": "10m"})
    point = resume_point(exe(policy), [attempt(1, FAILED, at=-570, ended=-30, exit_code=1)],
                         NOW)
    assert point.ended is None and point.due == NOW + timedelta(seconds=30)
