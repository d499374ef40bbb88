"""Re-queue (extensions 11) in the agent's retry loop, with real processes (tests/agent/tool.py):
a failure the policy's `requeue' takes spends no attempt, runs again after its delay, is bounded
by the deadline and is recorded in the attempts and as an event."""

from __future__ import annotations

import asyncio
import json
import time

from steepy.agent import AgentConfig, LocalAgent
from steepy.model.attempt import FAILED, REQUEUED, SUCCESS, TIMEOUT
from steepy.model.policies import RetryPolicy, TimeoutPolicy
from steepy.model.processchain import ProcessChain
from steepy.model.submission import ProcessChainStatus
from tests.agent.harness import read_count, tool_executable
import pytest

pytestmark = [pytest.mark.process]


def agent(tmp_path, events: list) -> LocalAgent:
    return LocalAgent("agent-1", AgentConfig(log_dir=tmp_path / "logs", kill_grace_period_ms=500),
                      on_event=lambda kind, data: events.append((kind, data)))


async def test_requeued_exit_codes_spend_no_attempt(tmp_path):
    events: list = []
    policy = RetryPolicy.from_json({"maxAttempts": 1,
                                    "requeue": {"exitCodes": [75], "delay": "100ms"}})
    exe, counter = tool_executable("e", "limited", [{"fail": {"exit_code": 75}},
                                                    {"fail": {"exit_code": 75}}, "return"],
                                   tmp_path, retries=policy)
    started = time.monotonic()
    outcome = await agent(tmp_path, events).execute(ProcessChain("c", [exe]))
    assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message
    assert time.monotonic() - started >= 0.2  # two re-queue delays
    assert read_count(counter) == 3
    assert [(r.attempt, r.outcome, r.exit_code) for r in outcome.attempts] == [
        (1, REQUEUED, 75), (1, REQUEUED, 75), (1, SUCCESS, 0)]
    first = outcome.attempts[0]
    assert first.delay_ms == 100
    assert first.delay_rule == "requeue after 100ms; requeue matched exit code 75"
    requeued = [d for k, d in events if k == "chain.attemptRequeued"]
    assert [(d["attempt"], d["exitCode"], d["delayMs"]) for d in requeued] == [(1, 75, 100)] * 2
    assert not [k for k, _ in events if k in ("chain.attemptFailed", "chain.retryScheduled")]


async def test_requeue_by_output_and_the_attempt_number_the_tool_sees(tmp_path):
    events: list = []
    env_file = tmp_path / "env.json"
    policy = RetryPolicy.from_json({"maxAttempts": 2,
                                    "requeue": {"output": "^429 too many", "delay": 10}})
    exe, counter = tool_executable(
        "e", "api", [{"print": ["calling", "429 too many requests"], "fail": {"exit_code": 1}},
                     {"raise": "boom"}, {"env_file": str(env_file)}], tmp_path, retries=policy)
    outcome = await agent(tmp_path, events).execute(ProcessChain("c", [exe]))
    assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message
    assert [(r.attempt, r.outcome) for r in outcome.attempts] == [
        (1, REQUEUED), (1, FAILED), (2, SUCCESS)]
    assert outcome.attempts[0].delay_rule.endswith("requeue matched output /^429 too many/")
    assert json.loads(env_file.read_text())["STEEPY_ATTEMPT"] == "2"
    assert [k for k, _ in events if k != "chain.progress"] == [
        "chain.attemptRequeued", "chain.attemptFailed", "chain.retryScheduled"]


async def test_a_failure_that_does_not_match_is_a_normal_attempt(tmp_path):
    events: list = []
    policy = RetryPolicy.from_json({"maxAttempts": 1, "requeue": {"exitCodes": [75]}})
    exe, counter = tool_executable("e", "limited", [{"fail": {"exit_code": 3}}, "return"],
                                   tmp_path, retries=policy)
    outcome = await agent(tmp_path, events).execute(ProcessChain("c", [exe]))
    assert outcome.status == ProcessChainStatus.ERROR
    assert read_count(counter) == 1
    assert [(r.attempt, r.outcome, r.exit_code) for r in outcome.attempts] == [(1, FAILED, 3)]
    assert "exited with code 3" in outcome.error_message


async def test_the_deadline_ends_a_tool_that_keeps_asking_to_run_later(tmp_path):
    """Re-queues spend no attempt, so only the deadline ends this loop. The deadline includes
    every start of the tool (a Python interpreter: tens of ms idle, a second or more on a loaded
    machine), so it is long against two starts and a delay: the tool runs at least twice while
    a start takes up to 1.75 s, about seven times on an idle machine."""
    events: list = []
    deadline_ms, delay_ms = 4000, 500
    policy = RetryPolicy.from_json({"maxAttempts": 1,
                                    "requeue": {"exitCodes": [75], "delay": f"{delay_ms}ms"}})
    exe, counter = tool_executable("e", "limited", [{"fail": {"exit_code": 75}}], tmp_path,
                                   retries=policy,
                                   deadline=TimeoutPolicy(deadline_ms, error_on_timeout=True))
    started = time.monotonic()
    outcome = await agent(tmp_path, events).execute(ProcessChain("c", [exe]))
    elapsed = time.monotonic() - started
    assert outcome.status == ProcessChainStatus.ERROR
    assert f"timed out after {deadline_ms} ms (deadline)" in outcome.error_message
    # the deadline, not an attempt count, ended it: at the deadline, or one delay before it
    # when the last re-queue would have slept past it (never sleeping into a deadline)
    assert (deadline_ms - delay_ms) / 1000 - 0.05 <= elapsed < deadline_ms / 1000 + 5, elapsed
    assert read_count(counter) >= 2
    assert all(r.attempt == 1 and r.outcome in (REQUEUED, TIMEOUT) for r in outcome.attempts)
    assert sum(r.outcome == REQUEUED for r in outcome.attempts) >= 1
    last = outcome.attempts[-1]
    assert last.outcome == TIMEOUT or last.delay_rule.startswith("no re-queue: the deadline")


async def test_a_cancel_is_never_requeued(tmp_path):
    events: list = []
    policy = RetryPolicy.from_json({"maxAttempts": 1, "requeue": {"exitCodes": [75]}})
    exe, counter = tool_executable("e", "slow", [{"block_ms": 5000}], tmp_path, retries=policy)
    a = agent(tmp_path, events)
    task = asyncio.ensure_future(a.execute(ProcessChain("c", [exe])))
    while read_count(counter) == 0:
        await asyncio.sleep(0.02)
    a.cancel("c")
    outcome = await task
    assert outcome.status == ProcessChainStatus.CANCELLED
    assert [r.outcome for r in outcome.attempts] == ["CANCELLED"]
