"""`steepy run' and `steepy show' in processes of their own (issue 26): the next `steepy
run' finishes what a killed one left (defect 4), and `show CHAIN' says why an attempt was not
retried and when the chain's next run is due (defect 3)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from steepy.registry import open_registry
from tests.conftest import ROOT

pytestmark = [pytest.mark.process]

NAP = """
api: 4.7.0
name: nap
actions:
  - {id: nap, type: execute, service: sleep, inputs: [{id: seconds, value: %s}]}
"""

ABORTS = """
api: 4.7.0
name: aborts
retries:
  processChains: {maxAttempts: 2, delay: 300ms}
actions:
  - id: step
    type: execute
    service: flaky
    inputs: [{id: fail_times, value: 9}, {id: exit_code, value: 2}, {id: state, value: %s}]
    outputs: [{id: output_file, var: result}]
"""


@pytest.fixture
def env(tmp_path) -> dict:
    return dict(os.environ, STEEPY_TMPPATH=str(tmp_path / "tmp"),
                STEEPY_OUTPATH=str(tmp_path / "out"),
                STEEPY_LOGS_PROCESSCHAINS_PATH=str(tmp_path / "logs"),
                STEEPY_DB_URL=f"sqlite:///{tmp_path / 'steepy.db'}",
                STEEPY_AGENT_KILLGRACEPERIOD="1s", STEEPY_SCHEDULER_LOOKUPINTERVAL="200ms",
                STEEPY_CONTROLLER_HEARTBEATINTERVAL="200ms",
                STEEPY_CONTROLLER_LEASETIMEOUT="1s")


def _steepy(env: dict, *args: str, **kwargs):
    return [sys.executable, "-m", "steepy.cli", *args], dict(cwd=ROOT, env=env, text=True,
                                                          **kwargs)


def _run(env: dict, *args: str) -> subprocess.CompletedProcess:
    command, options = _steepy(env, *args)
    return subprocess.run(command, capture_output=True, timeout=90, **options)


def _until(check, timeout: float = 30) -> None:
    end = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < end, "waited in vain"
        time.sleep(0.1)


def _killed_run(env: dict, tmp_path, seconds: float) -> str:
    """The id of a submission whose `steepy run' was killed (kill -9) while its chain ran,
    once its lease has run out."""
    (tmp_path / "left.yaml").write_text(NAP % seconds)
    command, options = _steepy(env, "run", str(tmp_path / "left.yaml"))
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             **options)
    left = first.stdout.readline().split()[-1]  # `submission ID'
    registry = open_registry(env["STEEPY_DB_URL"])
    _until(lambda: any(e["kind"] == "chain.started" for e in registry.views.events(left)))
    first.send_signal(signal.SIGKILL)
    first.wait(10)
    first.stdout.close()
    time.sleep(1.5)  # its lease (1 s) runs out
    return left


def test_the_next_run_finishes_what_a_killed_run_left(env, tmp_path) -> None:
    left = _killed_run(env, tmp_path, 2)
    (tmp_path / "short.yaml").write_text(NAP % 0.1)
    registry = open_registry(env["STEEPY_DB_URL"])
    shown = _run(env, "show", left)
    assert "no engine has owned it since" in shown.stderr, shown.stderr

    second = _run(env, "run", str(tmp_path / "short.yaml"))
    assert second.returncode == 0, second.stdout + second.stderr
    assert f"resuming submission {left} left by a dead engine\n" in second.stderr
    assert f"resumed submission {left}: SUCCESS" in second.stderr
    assert registry.views.get_submission(left).status == "SUCCESS"
    own = second.stdout.splitlines()[0].split()[-1]
    assert registry.views.get_submission(own).status == "SUCCESS"
    assert "no engine" not in _run(env, "list").stderr


def test_show_chain_says_why_no_retry_came_and_when_the_next_run_was_due(env, tmp_path) -> None:
    (tmp_path / "w.yaml").write_text(ABORTS % (tmp_path / "state"))
    done = _run(env, "run", str(tmp_path / "w.yaml"), "--json")
    assert done.returncode == 1, done.stderr
    chain_id = json.loads(done.stdout)["processChains"][0]["id"]
    shown = _run(env, "show", chain_id)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert "  chain retries: 2 attempts, delay exponential 300ms" in shown.stdout
    # each run: one attempt, not retried (the service's abortOn), then the chain's own delay
    attempts = [line for line in lines if "step attempt" in line]
    assert attempts == ["    step attempt 1: FAILED exit code 2; "
                        "no retry: abortOn matched exit code 2"] * 2
    due = [line for line in lines if "next run due at" in line]
    assert len(due) == 1 and due[0].endswith("(chain retry delay)")  # after run 1 only


def test_an_interrupted_run_gives_back_what_it_resumed(env, tmp_path) -> None:
    left = _killed_run(env, tmp_path, 30)
    (tmp_path / "mine.yaml").write_text(NAP % 30)
    command, options = _steepy(env, "run", str(tmp_path / "mine.yaml"))
    second = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              **options)
    said = f"resuming submission {left} left by a dead engine\n"
    while (line := second.stderr.readline()) not in (said, ""):  # warnings come before it
        pass
    assert line == said
    registry = open_registry(env["STEEPY_DB_URL"])
    _until(lambda: sum(e["kind"] == "chain.started" for e in registry.views.events(left)) == 2)
    second.send_signal(signal.SIGINT)  # Ctrl-C: its own is cancelled, the resumed one not
    second.stderr.read()
    assert second.wait(30) == 3
    second.stderr.close()
    assert registry.views.get_submission(left).status == "RUNNING"  # for the next engine
    chain, = registry.views.list_chains(left)[0]
    assert chain.status == "REGISTERED"
