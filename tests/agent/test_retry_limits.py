"""maxElapsed and stop in the retry loop (agent/retry.py) and where a cut run goes on
(agent/resume.py): virtual time for the loop, recorded start times for the resume, and one
run with real processes whose recorded delays are checked (fractional backoff, composed waits,
maxElapsed)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import pytest

from steepy.agent import AgentConfig, LocalAgent
from steepy.agent.resume import resume_point
from steepy.agent.retry import Retrying
from steepy.model.attempt import FAILED, INTERRUPTED, AttemptRecord
from steepy.model.policies import RetryPolicy
from steepy.model.processchain import Argument, ArgumentVariable, Executable, ProcessChain
from steepy.model.submission import ProcessChainStatus
from tests.clocks import RecordingClock

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=timezone.utc)


def failing(runtime_s: float, clock: RecordingClock):
    """An operation that always fails after running `runtime_s` on the clock."""
    calls: list[int] = []

    async def operation(attempt: int) -> int:
        calls.append(attempt)
        await clock.sleep(runtime_s)
        raise RuntimeError(f"attempt {attempt}")

    return operation, calls


async def test_no_retry_begins_past_max_elapsed_and_the_reason_is_heard():
    clock = RecordingClock(NOW)
    heard: list[str] = []
    policy = RetryPolicy.from_json({"maxElapsed": "10s", "delay": "1s", "exponentialBackoff": 2})
    operation, calls = failing(1.0, clock)
    with pytest.raises(RuntimeError, match="attempt 4"):
        await Retrying(policy, clock=clock, gave_up=lambda e, why: heard.append(why))(operation)
    # attempts begin at 0, 2, 5 and 10 s (run 1 s, pause 1, 2, 4 s); the 5th would begin at 19 s
    assert calls == [1, 2, 3, 4] and clock.sleeps == [1, 1, 1, 2, 1, 4, 1]
    assert heard == ["attempt 5 would begin 19s after the first began, past maxElapsed 10s"]


async def test_stop_all_goes_on_past_max_attempts_until_max_elapsed():
    clock = RecordingClock(NOW)
    policy = RetryPolicy.from_json({"maxAttempts": 2, "maxElapsed": "5s", "delay": "1s",
                                    "stop": "all"})
    operation, calls = failing(0.0, clock)
    with pytest.raises(RuntimeError):
        await Retrying(policy, clock=clock)(operation)
    assert calls == [1, 2, 3, 4, 5, 6]  # the 7th would begin at 6 s
    any_ = RetryPolicy.from_json({"maxAttempts": 2, "maxElapsed": "5s", "delay": "1s"})
    operation, calls = failing(0.0, RecordingClock(NOW))
    with pytest.raises(RuntimeError):
        await Retrying(any_, clock=RecordingClock(NOW))(operation)
    assert calls == [1, 2]


async def test_a_loop_that_goes_on_counts_from_the_recorded_first_start():
    """After a crash the process is new; attempt 1 began when its record says."""
    clock = RecordingClock(NOW)
    policy = RetryPolicy.from_json({"maxElapsed": "1m", "delay": "1s"})
    operation, calls = failing(0.0, clock)
    with pytest.raises(RuntimeError):
        await Retrying(policy, clock=clock)(operation, performed=3,
                                            first_start=NOW - timedelta(seconds=58))
    # attempt 4 begins 58 s after the first, 6 exactly at maxElapsed (it runs), 7 would at 61 s
    assert calls == [4, 5, 6]


def record(number: int, outcome: str, at: float, due: float | None = None) -> AttemptRecord:
    return AttemptRecord("e", "svc", number, NOW + timedelta(seconds=at), outcome=outcome,
                         exit_code=1, message=f"attempt {number} failed",
                         due_time=None if due is None else NOW + timedelta(seconds=due))


def test_a_cut_attempt_past_max_elapsed_ends_the_executable():
    exe = Executable("e", "tool", "svc", retries=RetryPolicy.from_json(
        {"maxElapsed": "30s", "delay": "5s"}))
    history = [record(1, FAILED, -40, due=-35), record(2, INTERRUPTED, -35)]
    point = resume_point(exe, history, NOW)
    assert point.ended is not None and point.ended[1] == (
        "Execution of service `svc' failed: attempt 2 was cut (INTERRUPTED) (attempt 3 would "
        "begin 45s after the first began, past maxElapsed 30s, counting those of cut runs)")
    # within it, the cut run's attempt counts and the next is due after the policy's delay
    point = resume_point(exe, [record(1, FAILED, -10, due=-5), record(2, INTERRUPTED, -5)], NOW)
    assert point.ended is None and point.performed == 2
    assert point.due == NOW + timedelta(seconds=5) and point.first_start == NOW - timedelta(seconds=10)


def sh(script: str) -> list[Argument]:
    return [Argument(f"arg{i}", ArgumentVariable(f"var{i}", v), "input")
            for i, v in enumerate(["-c", script])]


@pytest.mark.process
async def test_recorded_delays_of_composed_fractional_waits_until_max_elapsed(tmp_path):
    """A tool that always fails: pauses 10 + 20 * 2.5^(n-1) ms (30, 60, 135: 20 * 2.5^2 = 125
    exactly; 322 for the 4th, 312.5 rounded down), attempts until the next would begin more than
    400 ms after the first began."""
    policy = RetryPolicy.from_json({"maxElapsed": "400ms", "waits": [
        {"strategy": "fixed", "delay": "10ms"},
        {"strategy": "exponential", "delay": "20ms", "exponentialBackoff": 2.5}]})
    exe = Executable("e", "sh", "flaky", sh("exit 3"), retries=policy)
    events: list = []
    agent = LocalAgent("agent-1", AgentConfig(log_dir=tmp_path / "logs"),
                       on_event=lambda kind, data: events.append((kind, data)))
    outcome = await agent.execute(ProcessChain("c", [exe]))
    assert outcome.status == ProcessChainStatus.ERROR
    attempts = outcome.attempts
    # how many fit depends on how long each start of `sh' takes (a busy machine: 100 ms or
    # more); the second begins 30 ms + one start after the first
    assert len(attempts) >= 2, [a.delay_rule for a in attempts]
    assert [a.delay_ms for a in attempts[:-1]] == [30, 60, 135, 322][:len(attempts) - 1]
    assert attempts[0].delay_rule.startswith("fixed 10ms + exponential 20ms*2.5^(n-1), jitter none")
    last = attempts[-1]
    assert re.fullmatch(rf"no retry: attempt {len(attempts) + 1} would begin \S+ after the first "
                        r"began, past maxElapsed 400ms", last.delay_rule), last.delay_rule
    for earlier, later in zip(attempts, attempts[1:]):  # each began after its recorded pause
        assert later.start_time - earlier.end_time >= timedelta(milliseconds=earlier.delay_ms)
    # the last retry was due within maxElapsed of the first attempt's begin (it was decided
    # at the end of the one before, with its pause); it began then plus the machine's
    # lateness, which a loaded machine makes a few ms (a full run saw 404 ms)
    due = attempts[-2].end_time + timedelta(milliseconds=attempts[-2].delay_ms)
    assert due - attempts[0].start_time <= timedelta(milliseconds=400)
    scheduled = [d["delayMs"] for k, d in events if k == "chain.retryScheduled"]
    assert scheduled == [a.delay_ms for a in attempts[:-1]]
