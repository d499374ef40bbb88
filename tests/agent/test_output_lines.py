"""A tool's output as lines: `\\n`, `\\r` and `\\r\\n` each end one (Steep reads it with Java's
readLine), for the inactivity timer, the recorded last lines and the log; a timeout's message
ends with the last lines, as every failure's does (extensions 4)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from steepy.agent import AgentConfig, LocalAgent
from steepy.agent.process import Limits, _Watch
from steepy.model.policies import RetryPolicy, TimeoutPolicy
from steepy.model.processchain import Executable, ProcessChain
from steepy.model.submission import ProcessChainStatus
from tests.agent.harness import inputs, tool_executable


def agent(tmp_path: Path) -> LocalAgent:
    return LocalAgent("agent-1", AgentConfig(log_dir=tmp_path / "logs", kill_grace_period_ms=2000))


async def test_a_line_ends_at_newline_carriage_return_or_both() -> None:
    seen: list[str] = []
    watch = _Watch(asyncio.get_running_loop(), Limits(), 4, seen.extend)
    # the \n of a \r\n may come with the next read; \r\r\n is a line, an empty one, its end
    for chunk in [b"a\r", b"\nb\r\r\nc", b"\rd\n", b"e\r\n\r", b"\n", b"f"]:
        watch._data(chunk)
    assert seen == ["a", "b", "", "c", "d", "e", ""]
    assert list(watch.lines) == ["c", "d", "e", ""]
    watch._pipe_lost()  # the rest without a line end
    assert seen[-1] == "f"


@pytest.mark.process
async def test_a_progress_bar_with_carriage_returns_is_activity(tmp_path) -> None:
    # like curl or tqdm: no newline for 2 s, a new state every 0.2 s; the limit is 1 s
    script = ("for i in 1 2 3 4 5 6 7 8 9 10; do printf '\\rprogress %d' $i; sleep 0.2; done; "
              "printf '\\n'; echo done")
    exe = Executable("p", "sh", "progress", inputs(["-c", script]),
                     max_inactivity=TimeoutPolicy(1000))
    outcome = await agent(tmp_path).execute(ProcessChain("c", [exe]))
    assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message
    states = [f"progress {i}" for i in range(1, 11)]
    assert outcome.attempts[0].last_lines == ["", *states, "done"]
    # one line per state, as Steep logs each line readLine gives
    assert (tmp_path / "logs" / "c.log").read_text() == "\n".join(["", *states, "done"]) + "\n"


@pytest.mark.process
async def test_a_timeout_message_ends_with_the_last_output(tmp_path) -> None:
    exe, _ = tool_executable("e", "slow", [{"print": ["part 1", "part 2"], "block_ms": 20000}],
                             tmp_path, max_runtime=TimeoutPolicy(1000, error_on_timeout=True))
    outcome = await agent(tmp_path).execute(ProcessChain("c", [exe]))
    assert outcome.status == ProcessChainStatus.ERROR
    assert outcome.error_message == ("Execution of service `slow' timed out after 1000 ms "
                                     "(maximum runtime). Last output:\npart 1\npart 2")
    assert outcome.attempts[0].message == outcome.error_message


@pytest.mark.process
async def test_a_deadline_in_a_pause_ends_with_the_last_attempts_output(tmp_path) -> None:
    # the pause (10 s) would pass the deadline (1.5 s): the executable ends at once
    exe, _ = tool_executable("e", "flaky", [{"print": ["boom"], "fail": {"exit_code": 1}}],
                             tmp_path, retries=RetryPolicy(max_attempts=3, delay=10000),
                             deadline=TimeoutPolicy(1500, error_on_timeout=True))
    outcome = await agent(tmp_path).execute(ProcessChain("c", [exe]))
    assert outcome.status == ProcessChainStatus.ERROR
    assert outcome.error_message == ("Execution of service `flaky' timed out after 1500 ms "
                                     "(deadline). Last output:\nboom")
