"""The retry loop as tenacity's `Retrying` (agent/retry.py): its hooks, and virtual time through
an injected clock, alone and with one executable's attempts (agent/attempt.py) inside it."""

from __future__ import annotations

import asyncio
import random
import time
from datetime import timedelta

import pytest

from steepy.agent import AgentConfig, LocalAgent
from steepy.agent.attempt import Attempt, Executing, Failure
from steepy.agent.cancel import Cancelled, CancelToken
from steepy.agent.context import ExecContext
from steepy.agent.process import Limits
from steepy.agent.retry import SKIPPED, RetryState, Retrying
from steepy.model.attempt import FAILED, RUNNING, SUCCESS
from steepy.model.policies import RetryPolicy, TimeoutPolicy
from steepy.model.processchain import ProcessChain
from steepy.model.submission import ProcessChainStatus
from tests.agent.harness import tool_executable
from tests.clocks import RecordingClock

HOUR_MS = 3_600_000


def failing(times: int, error: type[Exception] = RuntimeError):
    """An operation that fails `times` times, then returns the attempt number; `calls` are the
    attempt numbers it was called with."""
    calls: list[int] = []

    async def operation(attempt: int) -> int:
        calls.append(attempt)
        if len(calls) <= times:
            raise error(f"attempt {attempt}")
        return attempt

    return operation, calls


async def test_an_hours_pauses_pass_in_virtual_time() -> None:
    clock = RecordingClock()
    operation, calls = failing(3)
    begin = time.monotonic()
    result = await Retrying(RetryPolicy(max_attempts=5, delay=HOUR_MS, exponential_backoff=2),
                            clock=clock)(operation)
    assert time.monotonic() - begin < 0.5
    assert result == 4 and calls == [1, 2, 3, 4]
    assert clock.sleeps == [3600, 7200, 14400] and clock.monotonic() == 25200


async def test_the_hooks_in_order() -> None:
    heard: list[object] = []

    async def before_sleep(state: RetryState) -> None:
        heard.append(state)

    async def sleep(seconds: float) -> None:
        heard.append(seconds)

    operation, calls = failing(2, ValueError)
    policy = RetryPolicy(max_attempts=4, delay=100, exponential_backoff=3)
    assert await Retrying(policy, before_sleep=before_sleep, sleep=sleep,
                          retryable=lambda e: (True, "why not"))(operation, performed=1) == 4
    assert calls == [2, 3, 4]  # going on after one attempt of a cut run
    first, second = heard[0], heard[2]
    assert isinstance(first, RetryState) and isinstance(second, RetryState)
    assert (first.attempt, first.performed, first.delay_ms, first.reason, first.requeued) == (
        2, 2, 300, "why not", False)
    assert str(first.error) == "attempt 2" and heard[1] == 0.3
    assert (second.attempt, second.delay_ms, heard[3]) == (3, 900, 0.9)


async def test_a_failure_not_retryable_and_the_last_attempt_end_the_loop() -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    operation, calls = failing(5, ValueError)
    with pytest.raises(ValueError, match="attempt 1"):
        await Retrying(RetryPolicy(max_attempts=3), sleep=sleep,
                       retryable=lambda e: (False, "abortOn matched"))(operation)
    assert calls == [1] and slept == []
    operation, calls = failing(5, ValueError)
    with pytest.raises(ValueError, match="attempt 3"):
        await Retrying(RetryPolicy(max_attempts=3), sleep=sleep)(operation)
    assert calls == [1, 2, 3] and slept == [0, 0]


async def test_before_sleep_may_end_the_loop_before_the_pause() -> None:
    clock = RecordingClock()

    async def deadline(state: RetryState) -> None:
        raise Failure(f"the deadline passes before attempt {state.performed + 1}")

    operation, calls = failing(5)
    with pytest.raises(Failure, match="before attempt 2"):
        await Retrying(RetryPolicy(max_attempts=3, delay=10), before_sleep=deadline,
                       clock=clock)(operation)
    assert calls == [1] and clock.sleeps == []


async def test_a_requeued_failure_is_not_counted() -> None:
    states: list[RetryState] = []

    async def before_sleep(state: RetryState) -> None:
        states.append(state)

    operation, calls = failing(3, KeyError)
    clock = RecordingClock()
    # KeyErrors are taken back (after 5 s) the first two times: attempt 1 runs three times
    taken: list[int] = []

    def requeue(error: Exception) -> int | None:
        taken.append(1)
        return 5000 if len(taken) <= 2 else None

    assert await Retrying(RetryPolicy(max_attempts=2, delay=1000), requeue=requeue,
                          before_sleep=before_sleep, clock=clock)(operation) == 2
    assert calls == [1, 1, 1, 2]
    assert [(s.attempt, s.performed, s.requeued, s.delay_ms) for s in states] == [
        (1, 0, True, 5000), (1, 0, True, 5000), (1, 1, False, 1000)]
    assert clock.sleeps == [5, 5, 1]


async def test_no_policy_no_attempt_cancellation_and_jitter() -> None:
    operation, calls = failing(1)
    with pytest.raises(RuntimeError):
        await Retrying(None)(operation)
    assert calls == [1]
    operation, calls = failing(0)
    assert await Retrying(RetryPolicy(max_attempts=0))(operation) is SKIPPED and calls == []
    operation, calls = failing(5, Cancelled)
    with pytest.raises(Cancelled):
        await Retrying(RetryPolicy(max_attempts=5))(operation)
    assert calls == [1]
    clock, operation, _ = RecordingClock(), *failing(3)
    policy = RetryPolicy(max_attempts=4, delay=1000, jitter="full")
    await Retrying(policy, rng=random.Random(7), clock=clock)(operation)
    rng = random.Random(7)
    assert clock.sleeps == [policy.retry_delay(n, rng) / 1000 for n in (1, 2, 3)]


# -- one executable's attempts, in virtual time ---------------------------------------------------


@pytest.mark.process
async def test_an_executable_with_an_hours_pause_in_virtual_time(tmp_path) -> None:
    """The whole agent on a virtual clock: the pause is stored with its due time on that
    clock before it begins, then passes without waiting."""
    clock, stored = RecordingClock(), []

    async def store(chain_id: str, run: int, record, durable: bool) -> None:
        stored.append((record.attempt, record.outcome, record.due_time, durable))

    exe, _ = tool_executable("e", "flaky", [{"fail": {"exit_code": 3}}, "return"], tmp_path,
                             retries=RetryPolicy(max_attempts=3, delay=HOUR_MS),
                             deadline=TimeoutPolicy(3 * HOUR_MS))
    agent = LocalAgent("a", AgentConfig(log_dir=None), store_attempt=store, clock=clock)
    begin = time.monotonic()
    outcome = await agent.execute(ProcessChain("c", [exe]))
    wall = time.monotonic() - begin
    assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message
    assert wall < 30  # two runs of a tool: nowhere near the hour the policy asked for
    assert clock.sleeps == [3600]
    first, second = outcome.attempts
    assert (first.outcome, first.delay_ms, second.outcome) == (FAILED, HOUR_MS, SUCCESS)
    assert first.due_time == clock.start + timedelta(hours=1)
    assert second.start_time == first.due_time
    # before each spawn, durably: the attempt as it starts; the pause before it begins
    assert stored[0] == (1, RUNNING, None, True)
    assert (1, FAILED, first.due_time, True) in stored
    assert stored.index((1, FAILED, first.due_time, True)) < stored.index((2, RUNNING, None, True))


@pytest.mark.process
async def test_the_deadline_counts_in_virtual_time(tmp_path) -> None:
    """A second pause of an hour would outlast a 90 minutes' deadline: the executable ends
    before it instead (deadline-aware waiting), after one virtual hour."""
    clock = RecordingClock()
    exe, counter = tool_executable("e", "flaky", [{"fail": {"exit_code": 3}}], tmp_path,
                                   retries=RetryPolicy(max_attempts=5, delay=HOUR_MS),
                                   deadline=TimeoutPolicy(90 * 60_000, error_on_timeout=True))
    agent = LocalAgent("a", AgentConfig(log_dir=None), clock=clock)
    outcome = await agent.execute(ProcessChain("c", [exe]))
    assert outcome.status == ProcessChainStatus.ERROR
    assert "timed out after 5400000 ms (deadline)" in outcome.error_message
    tried = [a.to_json() for a in outcome.attempts]  # (said when one is not as it should be)
    assert clock.sleeps == [3600] and counter.read_text().strip() == "2", tried
    assert outcome.attempts[-1].delay_rule == (
        "no retry: the deadline passes before attempt 3 could start after 3600000 ms"), tried


@pytest.mark.process
async def test_one_attempt_on_its_own(tmp_path) -> None:
    """An `Attempt` runs one try, records it, and says how it ended."""
    clock = RecordingClock()
    config = AgentConfig(log_dir=None)
    ctx = ExecContext(config, CancelToken(asyncio.get_running_loop()), "c", "s", 1, {},
                      lambda exe, lines: None, lambda kind, data: None, clock=clock)
    exe, _ = tool_executable("e", "flaky", [{"fail": {"exit_code": 3}}, "return"], tmp_path)
    runtime = config.plugins.runtime(config.runtime_of(exe.runtime))
    shared = Executing(exe, ctx, config.runtime_of(exe.runtime), runtime, Limits(), None)
    failed = Attempt(shared, 1)
    with pytest.raises(Failure, match="exited with code 3") as caught:
        await failed.run()
    assert caught.value.record is failed.record and failed.record.outcome == FAILED
    assert failed.record.start_time == clock.start and shared.last_exit == 3
    succeeded = Attempt(shared, 2)
    result = await succeeded.run()
    assert result.ok and succeeded.record.outcome == SUCCESS
    assert [r.attempt for r in ctx.records] == [1, 2]
    assert [r.ordinal for r in ctx.records] == [0, 1]


@pytest.mark.process
async def test_a_final_failure_is_stored_with_why_before_anything_goes_on(tmp_path) -> None:
    """The executable's last failure is stored durably with its `no retry' reason as the
    executable ends, not only with the chain's end: a fallback may run long meanwhile, and an
    engine taking over after a crash decides a failure stored without it again (a review)."""
    stored: list[tuple[str, str | None, bool]] = []

    async def save(record, durable: bool) -> None:
        stored.append((record.outcome, record.delay_rule, durable))

    config = AgentConfig(log_dir=None)
    ctx = ExecContext(config, CancelToken(asyncio.get_running_loop()), "c", "s", 1, {},
                      lambda exe, lines: None, lambda kind, data: None, save=save,
                      clock=RecordingClock())
    exe, _ = tool_executable("e", "flaky", [{"fail": {"exit_code": 3}}] * 2, tmp_path)
    exe.retries = RetryPolicy(max_attempts=2, delay=0)
    from steepy.agent.runner import run_executable

    outcome = await run_executable(exe, ctx)
    assert outcome.status == "ERROR"
    assert stored[-1] == (FAILED, "no retry: all 2 attempts used", True)
