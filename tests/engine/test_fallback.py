"""Fallback (extensions 10) through the engine and the registry: the example ends as
documented with the fallback's result, the attempts and the timeline say that the fallback
produced it, and `kill -9` of the engine while the fallback runs neither loses the submission
nor lets two copies of the fallback run at once."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from steepy.model.submission import SubmissionStatus as SS
from steepy.registry import Registry, open_registry
from tests.conftest import ROOT
from tests.engine.test_engine import _example, _run, _submit
from tests.engine.test_recovery import _env, _steepy

pytestmark = [pytest.mark.process]


@pytest.fixture
def registry(database_url) -> Registry:
    return open_registry(database_url)  # SQLite and PostgreSQL


@pytest.fixture(autouse=True)
def in_project(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)  # the tools' paths are relative to the project


async def test_the_example_succeeds_through_its_fallback(registry, tmp_path) -> None:
    sid = _submit(registry, _example("fallback.yaml"))
    await _run(registry, tmp_path, sid)
    submission = registry.views.get_submission(sid)
    assert submission.status == SS.SUCCESS, submission.error_message
    report = Path(submission.results["report"][0]).read_text().splitlines()
    assert report[0] == "no measurement today"
    assert report[1].startswith("stand-in for flaky (exit code 3): Execution of service `flaky'")
    (chain,), _ = registry.views.list_chains(sid)
    attempts = registry.views.attempts(chain.chain.id)
    assert [(a["executableId"], a["attempt"], a["outcome"], a.get("fallbackFor"))
            for a in attempts] == [("measure", 1, "FAILED", None), ("measure", 2, "FAILED", None),
                                   ("measure.fallback", 1, "SUCCESS", "measure"),
                                   ("publish", 1, "SUCCESS", None)]
    started = [e for e in registry.views.events(sid) if e["kind"] == "chain.fallbackStarted"]
    assert [(e["executableId"], e["fallbackServiceId"], e["exitCode"]) for e in started] == [
        ("measure", "stand-in", 3)]


SLOW_FALLBACK = """
api: 4.7.0
vars:
  - id: measured
actions:
  - id: measure
    type: execute
    service: flaky
    inputs: [{id: fail_times, value: 9}, {id: exit_code, value: 3}]
    outputs: [{id: output_file, var: measured, store: true}]
    retries: {maxAttempts: 1}
    fallback:
      service: slowprint
      inputs: [{id: lines, value: 12}, {id: interval, value: 0.25}]
      outputs: [{id: output_file, var: measured}]
"""


def _fallbacks_running(marker: str) -> list[psutil.Process]:
    """The copies of the fallback that run: processes with its command line whose parent
    has not (a copy started through pyenv's shim is a bash script for a while, and the
    subshells it forks show the same command line: they are one copy, not twins)."""
    found = {}
    for p in psutil.process_iter(["cmdline", "ppid"]):
        cmdline = p.info["cmdline"] or []
        if any("slowprint" in part for part in cmdline) and any(marker in part for part in cmdline):
            found[p.pid] = p
    return [p for p in found.values() if p.info["ppid"] not in found]


def test_kill_9_while_the_fallback_runs(tmp_path: Path) -> None:
    workflow = tmp_path / "w.yaml"
    workflow.write_text(SLOW_FALLBACK)
    db = f"sqlite:///{tmp_path / 'crash.db'}"
    registry = open_registry(db)
    env = _env(tmp_path)
    marker = str(tmp_path)  # the fallback's output path lies below it
    victim = subprocess.Popen(_steepy("run", str(workflow), "--db", db, "--agents", "1"), cwd=ROOT,
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not _fallbacks_running(marker):
        time.sleep(0.05)
    assert _fallbacks_running(marker), "the fallback never started"
    (submission,), _ = registry.views.list_submissions()
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    # the executor ends the orphaned fallback before anything can start it again
    gone_by = time.monotonic() + 15
    while _fallbacks_running(marker) and time.monotonic() < gone_by:
        time.sleep(0.05)
    assert not _fallbacks_running(marker)

    seen: list[int] = []
    worker = subprocess.Popen(_steepy("worker", "--db", db, "--agents", "2", "--exit-when-idle"),
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    while worker.poll() is None:  # never two copies of the fallback at once
        seen.append(len(_fallbacks_running(marker)))
        time.sleep(0.05)
    assert worker.returncode == 0, worker.stderr.read()
    assert max(seen) == 1
    after = registry.views.get_submission(submission.id)
    assert after.status == SS.SUCCESS, after.error_message
    lines = Path(after.results["measured"][0]).read_text().splitlines()
    assert len(lines) == 12  # one whole run of the fallback wrote it
    (chain,), _ = registry.views.list_chains(submission.id)
    runs = [r.status for r in registry.views.runs(chain.chain.id)]
    assert runs.count("SUCCESS") == 1
    # the killed run's attempts count: `measure' (maxAttempts 1) had failed, so the run
    # that goes on runs its fallback only, again from its start (it has no retry policy)
    # (a counted attempt's failure is stored at once; the start of the fallback, which has no
    # policy, goes with the next transaction within 0.25 s, and the kill may come first)
    cut = [(a["executableId"], a["outcome"]) for a in registry.views.attempts(
        chain.chain.id, runs.index("AGENT_LOST") + 1)]
    assert cut[0] == ("measure", "FAILED")
    assert cut[1:] in ([], [("measure.fallback", "AGENT_LOST")])
    last = registry.views.attempts(chain.chain.id, len(runs))
    assert [(a["executableId"], a["outcome"]) for a in last] == [("measure.fallback", "SUCCESS")]
