"""Attempts are records as they happen, and a retry policy survives `kill -9` of its engine:
the engine that takes the run over goes on at attempt N + 1 at its recorded due time, so a
tool never runs more often than `maxAttempts` allows, nor before its retry is due.

The tool appends a line to a file each time it really runs (its start time, attempt and
run), so what is counted is what ran, not what the registry says.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from datetime import datetime
from pathlib import Path

import psutil

from steepy.model.submission import SubmissionStatus as SS
from steepy.registry import open_registry
from tests.conftest import ROOT
from tests.agent.harness import running
from tests.engine.test_recovery import _env
import pytest

pytestmark = [pytest.mark.process]

TOOL = """#!/bin/sh
# ranlog LOG: one line per real run; the first attempt sleeps $SLEEP_FIRST s, then every
# attempt sleeps $SLEEP s, writes `end', and exits $CODE
echo "start $(date +%s.%N) $STEEPY_ATTEMPT $STEEPY_RUN_NUMBER" >> "$1"
if [ "$STEEPY_ATTEMPT" = 1 ]; then sleep "$3"; fi
sleep "$4"
echo "end $(date +%s.%N) $STEEPY_ATTEMPT $STEEPY_RUN_NUMBER" >> "$1"
exit "$2"
"""

SERVICE = """
- id: ranlog
  name: Logs each run
  description: Appends a line to a file per run
  path: {tool}
  runtime: other
  parameters:
    - {{id: log, name: Log, description: The file, type: input, cardinality: 1..1, dataType: string}}
    - {{id: code, name: Code, description: Exit code, type: input, cardinality: 1..1, dataType: integer}}
    - {{id: first, name: First, description: Extra sleep of attempt 1, type: input, cardinality: 1..1, dataType: string}}
    - {{id: sleep, name: Sleep, description: Sleep of every attempt, type: input, cardinality: 1..1, dataType: string}}
"""

WORKFLOW = """
api: 4.7.0
actions:
  - id: step
    type: execute
    service: ranlog
    inputs:
      - {{id: log, value: "{log}"}}
      - {{id: code, value: {code}}}
      - {{id: first, value: "{first}"}}
      - {{id: sleep, value: "{sleep}"}}
"""


class Case:
    def __init__(self, tmp_path: Path, *, code: int, retries: str | None, first: float = 0,
                 sleep: float = 0) -> None:
        self.tmp_path = tmp_path
        self.log = tmp_path / "runs.log"
        services = tmp_path / "services"
        services.mkdir()
        tool = tmp_path / "ranlog"
        tool.write_text(TOOL)
        tool.chmod(0o755)
        (services / "ranlog.yaml").write_text(SERVICE.format(tool=tool))
        self.services = services
        self.workflow = tmp_path / "w.yaml"
        self.workflow.write_text(WORKFLOW.format(log=self.log, code=code, first=first,
                                                 sleep=sleep)
                                 + ("" if retries is None else f"    retries: {retries}\n"))
        self.db = f"sqlite:///{tmp_path / 'crash.db'}"
        self.registry = open_registry(self.db)
        self.env = _env(tmp_path)

    def steepy(self, *args: str) -> list[str]:
        import sys
        return [sys.executable, "-m", "steepy.cli", *args, "--db", self.db,
                "--services", str(self.services)]

    def start(self) -> subprocess.Popen:
        return subprocess.Popen(self.steepy("run", str(self.workflow), "--agents", "1"),
                                cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)

    def lines(self, word: str) -> list[tuple[float, int, int]]:
        if not self.log.exists():
            return []
        return [(float(t), int(a), int(r)) for w, t, a, r in
                (line.split() for line in self.log.read_text().splitlines()) if w == word]

    def wait_for(self, check, what: str, timeout_s: float = 60) -> None:
        end = time.monotonic() + timeout_s
        while not check():
            assert time.monotonic() < end, f"timed out waiting for {what}"
            time.sleep(0.02)

    def chain_id(self) -> str | None:
        submissions, _ = self.registry.views.list_submissions()
        chains, _ = (self.registry.views.list_chains(submissions[0].id) if submissions
                     else ([], 0))
        return chains[0].chain.id if chains else None

    def attempts(self, run: int | None = None) -> list[dict]:
        chain_id = self.chain_id()
        return [] if chain_id is None else self.registry.views.attempts(chain_id, run)

    def recover(self) -> SS:
        worker = subprocess.run(self.steepy("worker", "--agents", "2", "--exit-when-idle"),
                                cwd=ROOT, env=self.env, capture_output=True, text=True,
                                timeout=120)
        assert worker.returncode == 0, worker.stderr
        (submission,), _ = self.registry.views.list_submissions()
        return submission.status


def _kill(victim: subprocess.Popen) -> None:
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def test_kill_9_during_the_retry_pause(tmp_path: Path) -> None:
    """The pause outlives the lease (2 s here): the recovering worker waits for the recorded
    due time, runs attempt 2 once, and stops: maxAttempts 2 means two runs in all."""
    case = Case(tmp_path, code=1, retries="{maxAttempts: 2, delay: 6s}")
    victim = case.start()
    case.wait_for(lambda: any(a.get("dueTime") for a in case.attempts()), "the pause")
    _kill(victim)
    (failed,) = case.attempts(1)
    assert failed["outcome"] == "FAILED" and failed["delayMs"] == 6000
    assert case.recover() == SS.ERROR
    runs = case.lines("start")
    assert [a for _, a, _ in runs] == [1, 2]
    assert runs[1][0] >= _epoch(failed["dueTime"]) - 0.05  # not before it was due
    (second,) = case.attempts(2)
    assert (second["attempt"], second["outcome"]) == (2, "FAILED")



def test_kill_9_between_a_failures_record_and_its_pauses(tmp_path: Path) -> None:
    """A failed attempt is stored as it ends, its pause a moment later (the retry policy
    decides in between). An engine killed in that moment left a failure with no pause and
    no `no retry' reason, which was read as the executable's end: 1 run of 3 (found by a
    review). The window is made here by killing the engine during the pause and taking the
    pause out of the record; the engine that takes over decides again: attempts 2 and 3."""
    case = Case(tmp_path, code=1, retries="{maxAttempts: 3, delay: 1s}", first=0)
    victim = case.start()
    case.wait_for(lambda: any(a.get("dueTime") for a in case.attempts()), "the pause")
    _kill(victim)
    with case.registry.db.write() as conn:  # as it was before the pause was stored
        conn.exec_driver_sql("UPDATE attempts SET due_time = NULL, delay_ms = NULL, "
                             "delay_rule = NULL")
    (failed,) = case.attempts(1)
    assert (failed["outcome"], failed.get("dueTime"), failed.get("delayRule")) == (
        "FAILED", None, None)
    assert case.recover() == SS.ERROR
    assert [a for _, a, _ in case.lines("start")] == [1, 2, 3]  # as its policy allows
    outcomes = [(a["attempt"], a["outcome"]) for run in (1, 2) for a in case.attempts(run)]
    assert outcomes == [(1, "FAILED"), (2, "FAILED"), (3, "FAILED")]


def test_kill_9_after_a_final_failure_is_recorded_runs_nothing_more(tmp_path: Path) -> None:
    """The other side: a failure stored with its policy's `no retry' reason ended the
    executable, and an engine that takes over does not run it again."""
    case = Case(tmp_path, code=1, retries="{maxAttempts: 2, delay: 6s}")
    victim = case.start()
    case.wait_for(lambda: any(a.get("dueTime") for a in case.attempts()), "the pause")
    _kill(victim)
    with case.registry.db.write() as conn:  # as if attempt 1 had been the last one allowed
        conn.exec_driver_sql("UPDATE attempts SET due_time = NULL, delay_ms = NULL, "
                             "delay_rule = 'no retry: all 2 attempts used'")
    assert case.recover() == SS.ERROR
    assert [a for _, a, _ in case.lines("start")] == [1]

def test_kill_9_during_an_attempt(tmp_path: Path) -> None:
    """The attempt that was running counts as spent (AGENT_LOST); the next waits the
    policy's delay and is the last."""
    case = Case(tmp_path, code=1, retries="{maxAttempts: 2, delay: 1s}", first=30)
    victim = case.start()
    case.wait_for(lambda: case.lines("start"), "the first attempt")
    case.wait_for(lambda: case.attempts(), "its record")
    assert [a["outcome"] for a in case.attempts()] == ["RUNNING"]  # listed while it runs

    def placed() -> list[dict]:  # where its processes run, for an engine that takes over
        runs = case.registry.leases.lost_runs([])
        return [a for a in runs[0]["attempts"] if a["pgid"]] if runs else []

    case.wait_for(placed, "the attempt's process group")
    (where,) = placed()
    assert where["host"] == socket.gethostname() and where["executorPid"] > 0
    assert psutil.Process(where["executorPid"]).create_time() == where["executorStarted"]
    _kill(victim)
    assert case.recover() == SS.ERROR
    assert [a for _, a, _ in case.lines("start")] == [1, 2]
    assert not [a for _, a, _ in case.lines("end") if a == 1]  # it was ended, not finished
    assert [(a["attempt"], a["outcome"]) for a in case.attempts(1)] == [(1, "AGENT_LOST")]
    assert [(a["attempt"], a["outcome"]) for a in case.attempts(2)] == [(2, "FAILED")]



def test_kill_9_of_engine_and_executor_ends_what_left_the_tools_group(tmp_path: Path) -> None:
    """A tool's child in a session of its own (`setsid`) outlives the tool's process group.
    With the engine and its executor both killed, the engine that takes the run over ends it
    by the run named in its environment before attempt 2 starts: a review saw the two
    overlap."""
    case = Case(tmp_path, code=1, retries="{maxAttempts: 2, delay: 1s}", first=30)
    tool = tmp_path / "ranlog"
    tool.write_text(TOOL.replace('if [ "$STEEPY_ATTEMPT" = 1 ]; then sleep "$3"; fi',
                                 'if [ "$STEEPY_ATTEMPT" = 1 ]; then setsid sleep 120 & '
                                 'echo $! > "$1.setsid"; sleep "$3"; fi'))
    victim = case.start()
    stray = tmp_path / "runs.log.setsid"
    case.wait_for(lambda: stray.exists() and stray.read_text().strip(), "the setsid child")
    child = int(stray.read_text())

    def placed() -> list[dict]:  # the attempt's group, recorded for an engine taking over
        runs = case.registry.leases.lost_runs([])
        return [a for a in runs[0]["attempts"] if a["pgid"]] if runs else []

    case.wait_for(placed, "the attempt's process group")
    executors = [p for p in psutil.Process(victim.pid).children() if "executor" in
                 " ".join(p.cmdline())]
    assert executors, "the engine's executor"
    for process in executors:
        process.kill()
    _kill(victim)
    assert psutil.Process(child).is_running() and os.getsid(child) == child  # left behind
    assert case.recover() == SS.ERROR
    assert [a for _, a, _ in case.lines("start")] == [1, 2]  # as maxAttempts allows
    assert not running(child)

def test_kill_9_between_an_attempts_end_and_its_record(tmp_path: Path) -> None:
    """The engine is stopped (SIGSTOP) while the tool runs, the tool ends, then the engine
    is killed: its success was never recorded, so the attempt counts as cut, and with
    maxAttempts 1 the tool does not run again: the executable fails, saying why."""
    case = Case(tmp_path, code=0, retries="{maxAttempts: 1}", sleep=1)
    victim = case.start()
    case.wait_for(lambda: case.lines("start"), "the attempt")
    case.wait_for(lambda: case.attempts(), "its record")
    os.kill(victim.pid, signal.SIGSTOP)
    case.wait_for(lambda: case.lines("end"), "the tool's end")
    time.sleep(0.3)
    _kill(victim)
    assert case.recover() == SS.ERROR
    assert len(case.lines("start")) == 1  # it ran once, as its policy allows
    last = case.registry.views.runs(case.chain_id())[-1]
    assert "attempt 1 was cut (AGENT_LOST)" in (last.error_message or "")


def test_an_attempt_without_a_policy_is_listed_while_it_runs(tmp_path: Path) -> None:
    """No policy counts it, so its row goes with the next transaction (within 0.25 s)
    instead of one of its own; it is listed while it runs all the same, then updated."""
    case = Case(tmp_path, code=0, retries=None, sleep=3)
    victim = case.start()
    case.wait_for(lambda: case.lines("start"), "the attempt")
    case.wait_for(lambda: case.attempts(), "its record", timeout_s=2.5)
    assert not case.lines("end")
    assert [(a["attempt"], a["outcome"], a["endTime"]) for a in case.attempts()] == [
        (1, "RUNNING", None)]
    assert victim.wait(timeout=60) == 0
    assert [(a["attempt"], a["outcome"]) for a in case.attempts()] == [(1, "SUCCESS")]
