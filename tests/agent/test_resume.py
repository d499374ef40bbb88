"""Where an executable goes on after cut runs (agent/resume.py): what they recorded counts."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from steepy.agent.resume import resume_point
from steepy.model.attempt import (AGENT_LOST, FAILED, INTERRUPTED, REQUEUED, SUCCESS, TIMEOUT,
                                  AttemptRecord)
from steepy.model.policies import RetryPolicy
from steepy.model.processchain import Executable

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=timezone.utc)


def exe(policy: RetryPolicy | None = RetryPolicy(max_attempts=3, delay=4000),
        exe_id: str = "e") -> Executable:
    return Executable(exe_id, "tool", "svc", retries=policy)


def attempt(number: int, outcome: str, *, at: float = -60, due: float | None = None,
            exit_code: int | None = None, exe_id: str = "e",
            message: str | None = None) -> AttemptRecord:
    return AttemptRecord(exe_id, "svc", number, NOW + timedelta(seconds=at), outcome=outcome,
                         exit_code=exit_code, message=message,
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


def test_a_failure_without_a_pause_had_ended_the_executable() -> None:
    point = resume_point(exe(), [attempt(1, TIMEOUT, message="timed out")], NOW)
    assert point.ended is not None and point.ended[1] == "timed out"


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
