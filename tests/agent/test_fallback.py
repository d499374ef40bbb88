"""Fallback (extensions 10) in the agent, with real processes (tests/agent/tool.py): the
executable after an action's, marked `fallbackFor', runs only when the action's executable has
failed for real after all its attempts, gets what failed in its environment, and the chain goes
on as if the action had succeeded."""

from __future__ import annotations

import asyncio
import json

from steepy.agent import AgentConfig, LocalAgent
from steepy.model.attempt import CANCELLED, FAILED, SUCCESS, TIMEOUT
from steepy.model.policies import RetryPolicy, TimeoutPolicy
from steepy.model.processchain import ProcessChain
from steepy.model.submission import ProcessChainStatus
from tests.agent.harness import read_count, tool_executable
import pytest

pytestmark = [pytest.mark.process]


def agent(tmp_path, events: list) -> LocalAgent:
    return LocalAgent("agent-1", AgentConfig(log_dir=tmp_path / "logs", kill_grace_period_ms=500),
                      on_event=lambda kind, data: events.append((kind, data)))


def with_fallback(tmp_path, main_calls: list, fallback_calls: list, **main_policies):
    main, main_count = tool_executable("act", "primary", main_calls, tmp_path, **main_policies)
    fallback, fallback_count = tool_executable("act.fallback", "stand-in", fallback_calls, tmp_path)
    fallback.fallback_for = "act"
    return main, fallback, main_count, fallback_count


async def test_the_fallback_stands_in_after_all_attempts_failed(tmp_path):
    events: list = []
    env_file = tmp_path / "env.json"
    main, fallback, main_count, fallback_count = with_fallback(
        tmp_path, [{"print": ["no data today"], "fail": {"exit_code": 3}}],
        [{"env_file": str(env_file)}],
        retries=RetryPolicy.from_json({"maxAttempts": 2, "delay": 10}))
    after, after_count = tool_executable("next", "consumer", ["return"], tmp_path)
    outcome = await agent(tmp_path, events).execute(ProcessChain("c", [main, fallback, after]))
    assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message
    assert (read_count(main_count), read_count(fallback_count), read_count(after_count)) == (2, 1, 1)
    assert [(r.executable_id, r.attempt, r.outcome, r.fallback_for) for r in outcome.attempts] == [
        ("act", 1, FAILED, None), ("act", 2, FAILED, None),
        ("act.fallback", 1, SUCCESS, "act"), ("next", 1, SUCCESS, None)]
    env = json.loads(env_file.read_text())
    assert env["STEEPY_FAILED_SERVICE"] == "primary"
    assert env["STEEPY_FAILED_EXIT_CODE"] == "3"
    assert "exited with code 3" in env["STEEPY_FAILED_MESSAGE"]
    assert "no data today" in env["STEEPY_FAILED_MESSAGE"]
    assert env["STEEPY_EXECUTABLE_ID"] == "act.fallback"
    started = [d for k, d in events if k == "chain.fallbackStarted"]
    assert len(started) == 1
    assert (started[0]["executableId"], started[0]["fallbackServiceId"], started[0]["exitCode"]) \
        == ("act", "stand-in", 3)


async def test_no_fallback_after_success(tmp_path):
    events: list = []
    main, fallback, main_count, fallback_count = with_fallback(tmp_path, ["return"], ["return"])
    outcome = await agent(tmp_path, events).execute(ProcessChain("c", [main, fallback]))
    assert outcome.status == ProcessChainStatus.SUCCESS
    assert (read_count(main_count), read_count(fallback_count)) == (1, 0)
    assert [r.executable_id for r in outcome.attempts] == ["act"]
    assert not [k for k, _ in events if k == "chain.fallbackStarted"]


async def test_when_the_fallback_fails_too_the_chain_fails_with_both_errors(tmp_path):
    events: list = []
    main, fallback, _, fallback_count = with_fallback(
        tmp_path, [{"print": ["first problem"], "fail": {"exit_code": 4}}],
        [{"print": ["second problem"], "fail": {"exit_code": 5}}])
    after, after_count = tool_executable("next", "consumer", ["return"], tmp_path)
    outcome = await agent(tmp_path, events).execute(ProcessChain("c", [main, fallback, after]))
    assert outcome.status == ProcessChainStatus.ERROR
    assert read_count(fallback_count) == 1 and read_count(after_count) == 0
    message = outcome.error_message
    assert "`primary' failed" in message and "exited with code 4" in message
    assert "first problem" in message
    assert "Its fallback failed too" in message and "`stand-in' failed" in message
    assert "exited with code 5" in message and "second problem" in message
    assert [(r.executable_id, r.outcome) for r in outcome.attempts] == [
        ("act", FAILED), ("act.fallback", FAILED)]


async def test_a_cancel_runs_no_fallback(tmp_path):
    events: list = []
    main, fallback, main_count, fallback_count = with_fallback(
        tmp_path, [{"block_ms": 5000}], ["return"])
    a = agent(tmp_path, events)
    task = asyncio.ensure_future(a.execute(ProcessChain("c", [main, fallback])))
    while read_count(main_count) == 0:
        await asyncio.sleep(0.02)
    a.cancel("c")
    outcome = await task
    assert outcome.status == ProcessChainStatus.CANCELLED
    assert read_count(fallback_count) == 0
    assert [r.outcome for r in outcome.attempts] == [CANCELLED]


async def test_a_timeout_runs_the_fallback_only_with_error_on_timeout(tmp_path):
    for error_on_timeout, status, runs in ((False, ProcessChainStatus.CANCELLED, 0),
                                           (True, ProcessChainStatus.SUCCESS, 1)):
        directory = tmp_path / str(error_on_timeout)
        directory.mkdir()
        main, fallback, _, fallback_count = with_fallback(
            directory, [{"block_ms": 5000}], ["return"],
            max_runtime=TimeoutPolicy(300, error_on_timeout=error_on_timeout))
        outcome = await agent(directory, []).execute(ProcessChain("c", [main, fallback]))
        assert outcome.status == status, (error_on_timeout, outcome.error_message)
        assert read_count(fallback_count) == runs
        assert outcome.attempts[0].outcome == TIMEOUT
