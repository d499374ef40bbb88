"""A pause longer than the longest duration (one stored before validation refused it, or grown
by exponential backoff) is taken as that long (steepy/agent/pauses.py): its due time is a date
datetime can hold, never an OverflowError that would end the chain (or the engine) in error."""

from __future__ import annotations

from datetime import timedelta

import pytest

from steepy.agent import AgentConfig, LocalAgent
from steepy.model.attempt import FAILED, REQUEUED, SUCCESS
from steepy.model.durations import MAX_DURATION_MS
from steepy.model.policies import RetryPolicy
from steepy.model.processchain import ProcessChain
from steepy.model.submission import ProcessChainStatus
from tests.agent.harness import tool_executable
from tests.clocks import RecordingClock

LONGEST = 2**63 - 1  # what a workflow could give before the bound (and the model still reads)


@pytest.mark.process
@pytest.mark.parametrize("retries, first_outcome", [
    ({"maxAttempts": 2, "delay": LONGEST}, FAILED),
    ({"maxAttempts": 1, "requeue": {"exitCodes": [3], "delay": "3000000d"}}, REQUEUED),
])
async def test_a_pause_beyond_the_longest_duration_is_taken_as_the_longest(
        tmp_path, retries, first_outcome) -> None:
    clock = RecordingClock()
    exe, _ = tool_executable("e", "flaky", [{"fail": {"exit_code": 3}}, "return"], tmp_path,
                             retries=RetryPolicy.from_json(retries))
    agent = LocalAgent("a", AgentConfig(log_dir=None), clock=clock)
    outcome = await agent.execute(ProcessChain("c", [exe]))
    assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message
    first, second = outcome.attempts[0], outcome.attempts[-1]
    assert (first.outcome, second.outcome) == (first_outcome, SUCCESS)
    assert first.due_time == clock.start + timedelta(milliseconds=MAX_DURATION_MS)
    assert clock.sleeps == [MAX_DURATION_MS / 1000]
