"""Signals from the tool and what it learns of the attempt before (extensions 3 and 11), with
real processes: one chain whose first tool fails through a malformed signal file, asks to be
re-queued (spending no attempt), reads STEEPY_LAST_FAILED_AT / STEEPY_LAST_MESSAGE, and whose
second tool prunes the chain so that the third never runs."""

from __future__ import annotations

import os
import threading
import time
from datetime import datetime, timezone

import pytest

from steepy.agent import AgentConfig, LocalAgent
from steepy.model.attempt import FAILED, PRUNED, REQUEUED, SUCCESS
from steepy.model.policies import RetryPolicy
from steepy.model.processchain import Argument, ArgumentVariable, Executable, ProcessChain
from steepy.model.submission import ProcessChainStatus

pytestmark = [pytest.mark.process]

# run 1 writes a malformed signal, run 2 asks for a re-queue (its exit code 4 does not count),
# run 3 shows what it was told of the failure before
FIRST = """\
n=$(cat "$COUNTER" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > "$COUNTER"
case $n in
  1) echo 'retry 5s' > "$STEEPY_SIGNAL_FILE"; echo first ;;
  2) echo 'requeue 60ms' > "$STEEPY_SIGNAL_FILE"; exit 4 ;;
  *) echo "at=$STEEPY_LAST_FAILED_AT"; echo "message=$STEEPY_LAST_MESSAGE"
     echo "attempt=$STEEPY_ATTEMPT" ;;
esac
"""


def script(exe_id: str, text: str, **declared) -> Executable:
    words = [Argument(f"a{i}", ArgumentVariable(f"v{i}", v), "input")
             for i, v in enumerate(["-c", text])]
    return Executable(exe_id, "/bin/sh", "sh", words, **declared)


async def test_signals_from_the_tool(tmp_path):
    work = tmp_path / "tmp"
    work.mkdir()
    policy = RetryPolicy.from_json({"maxAttempts": 2, "delay": "10ms"})
    chain = ProcessChain("c", [
        script("first", FIRST, retries=policy, environment={"COUNTER": str(tmp_path / "n")}),
        script("second", 'printf "prune nothing new\\n" > "$STEEPY_SIGNAL_FILE"; exit 1'),
        script("third", f"touch {tmp_path / 'third-ran'}"),
    ])
    events: list = []
    agent = LocalAgent("a", AgentConfig(log_dir=tmp_path / "logs", tmp_path=str(work)),
                       on_event=lambda kind, data: events.append((kind, data)))
    started = datetime.now(timezone.utc)
    outcome = await agent.execute(chain)

    # the chain ends without error at the pruning tool, and says so; the third never ran
    assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message
    assert outcome.pruned == "the tool pruned its chain: nothing new"
    assert not (tmp_path / "third-ran").exists()
    rows = [(r.executable_id, r.attempt, r.outcome, r.exit_code) for r in outcome.attempts]
    assert rows == [("first", 1, FAILED, 0), ("first", 2, REQUEUED, 4),
                    ("first", 2, SUCCESS, 0), ("second", 1, PRUNED, 1)]
    malformed, requeued = outcome.attempts[0], outcome.attempts[1]
    assert malformed.message == ("Execution of service `sh' failed: signal file: unknown signal; "
                                 "expected `requeue <duration>' (e.g. `requeue 30s') "
                                 "or `prune [reason]'. Last output:\nfirst")  # what it printed
    assert requeued.delay_ms == 60 and requeued.delay_rule == (
        "requeue after 60ms; signal from the tool")
    assert (requeued.due_time - requeued.end_time).total_seconds() >= 0.06
    assert any(data.get("delayMs") == 60 for kind, data in events
               if kind.value == "chain.attemptRequeued")

    # the attempt after the failure was told when it ended and why, on one line
    told = dict(line.split("=", 1) for line in outcome.attempts[2].last_lines)
    assert told["attempt"] == "2"
    failed_at = datetime.fromisoformat(told["at"].replace("Z", "+00:00"))
    assert told["at"].endswith("Z") and started <= failed_at <= datetime.now(timezone.utc)
    assert abs((failed_at - malformed.end_time).total_seconds()) < 0.001
    assert told["message"] == malformed.message.partition("\n")[0].removesuffix(
        ". Last output:") + "; last output: first"

    # every attempt's signal file is gone
    assert [p for p in os.listdir(work) if p.startswith(".steepy-signal")] == []



async def test_a_link_at_the_signal_path_is_refused_unread(tmp_path):
    """A symbolic link would let the tool read any file the engine can (under Docker: one of
    the host, where the link is resolved): it fails the attempt unread, and the next attempt
    learns nothing of the linked file."""
    work = tmp_path / "tmp"
    work.mkdir()
    secret = tmp_path / "hostsecret"
    secret.write_text("s3cr3t-token-value\n")
    policy = RetryPolicy.from_json({"maxAttempts": 2, "delay": "10ms"})
    link = script("link", f'if [ "$STEEPY_ATTEMPT" = 1 ]; then ln -s {secret} "$STEEPY_SIGNAL_FILE"; '
                  'else echo "last=$STEEPY_LAST_MESSAGE"; fi', retries=policy)
    agent = LocalAgent("a", AgentConfig(log_dir=tmp_path / "logs", tmp_path=str(work)))
    outcome = await agent.execute(ProcessChain("c", [link]))
    assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message
    first = outcome.attempts[0]
    assert (first.outcome, first.message) == (FAILED, (
        "Execution of service `sh' failed: signal file: a symbolic link, not a file; "
        "the tool must write its line into a new file there"))
    assert "s3cr3t" not in repr(outcome.attempts)
    assert outcome.attempts[1].last_lines == [f"last={first.message}"]
    assert [p for p in os.listdir(work) if p.startswith(".steepy-signal")] == []


async def test_a_fifo_at_the_signal_path_does_not_block_the_engine(tmp_path):
    """Opening a FIFO to read waits for a writer: the engine must not. The attempt fails at
    once. (Were the engine blocked, a writer comes after 5 s to free it: the test fails then
    instead of hanging.)"""
    work = tmp_path / "tmp"
    work.mkdir()
    agent = LocalAgent("a", AgentConfig(log_dir=tmp_path / "logs", tmp_path=str(work)))

    def free_a_blocked_engine() -> None:
        for name in os.listdir(work):
            with open(work / name, "wb"):  # pairs with a reader stuck in open()
                pass

    rescue = threading.Timer(5, free_a_blocked_engine)
    rescue.start()
    began = time.monotonic()
    try:
        outcome = await agent.execute(ProcessChain("c", [
            script("fifo", 'mkfifo "$STEEPY_SIGNAL_FILE"')]))
    finally:
        rescue.cancel()
    assert time.monotonic() - began < 5 and outcome.status == ProcessChainStatus.ERROR
    assert outcome.attempts[0].message == (
        "Execution of service `sh' failed: signal file: not a regular file; "
        "the tool must write its line into a new file there")
    assert [p for p in os.listdir(work) if p.startswith(".steepy-signal")] == []


async def test_a_nul_byte_in_the_last_output_line_reaches_no_environment(tmp_path):
    """The last output line goes into the next attempt's STEEPY_LAST_MESSAGE and into the
    fallback's STEEPY_FAILED_MESSAGE: a NUL byte in it must not make them impossible (the
    attempt would fail without its tool running)."""
    work = tmp_path / "tmp"
    work.mkdir()
    policy = RetryPolicy.from_json({"maxAttempts": 2, "delay": "10ms"})
    failing = script("first", 'if [ "$STEEPY_ATTEMPT" = 1 ]; then printf "a\\000b\\n"; exit 1; '
                     'fi; echo "last=$STEEPY_LAST_MESSAGE"; exit 1', retries=policy)
    stand_in = script("first.fallback", 'echo "failed=$STEEPY_FAILED_MESSAGE"')
    stand_in.fallback_for = "first"
    agent = LocalAgent("a", AgentConfig(log_dir=tmp_path / "logs", tmp_path=str(work)))
    outcome = await agent.execute(ProcessChain("c", [failing, stand_in]))
    assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message
    second, fallback = outcome.attempts[1], outcome.attempts[2]
    assert second.exit_code == 1 and second.last_lines == [
        "last=Execution of service `sh' failed: exited with code 1; last output: a b"]
    assert fallback.last_lines == [
        "failed=Execution of service `sh' failed: exited with code 1; last output: "
        + second.last_lines[0]]
