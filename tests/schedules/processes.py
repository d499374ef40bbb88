"""What the process tests of schedules share: the steepy command, its environment, workers,
and the check that every due time of a schedule became exactly one firing or skip."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

from steepy.registry import open_registry
from tests.conftest import ROOT

NAP = """
api: 4.7.0
name: nap
actions:
  - {id: nap, type: execute, service: sleep, inputs: [{id: seconds, value: 0}]}
"""

# the same nap, its seconds a variable that can be given (`--var pause=2`)
NAP_VARS = """api: 4.7.0
name: nap
vars:
  - {id: pause, value: 0}
actions:
  - {id: nap, type: execute, service: sleep, inputs: [{id: seconds, var: pause}]}
"""


def env(tmp_path: Path, db: str, **extra: str) -> dict[str, str]:
    out = dict(os.environ)
    out.pop("STEEPY_SERVER", None)
    out.update(STEEPY_TMPPATH=str(tmp_path / "tmp"), STEEPY_OUTPATH=str(tmp_path / "out"),
               STEEPY_LOGS_PROCESSCHAINS_PATH=str(tmp_path / "logs"), STEEPY_DB_URL=db,
               STEEPY_CONTROLLER_LEASETIMEOUT="2s", STEEPY_CONTROLLER_HEARTBEATINTERVAL="300ms",
               STEEPY_SCHEDULER_LOOKUPINTERVAL="1s", STEEPY_AGENT_KILLGRACEPERIOD="1s", **extra)
    return out


def steepy(*args: str) -> list[str]:
    return [sys.executable, "-m", "steepy.cli", *args]


def cli(environment: dict, *args: str, ok: int = 0) -> str:
    out = subprocess.run(steepy(*args), cwd=ROOT, env=environment, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == ok, out.stderr
    return out.stdout


def add(environment: dict, workflow: Path, *args: str) -> str:
    """`steepy schedule add'; the new schedule's id."""
    return cli(environment, "schedule", "add", str(workflow), "--services",
               str(ROOT / "services"), *args).split()[0]


def worker(environment: dict, log: Path) -> subprocess.Popen:
    with open(log, "ab") as out:
        return subprocess.Popen(steepy("worker", "--agents", "1", "--services",
                                       str(ROOT / "services")), cwd=ROOT, env=environment,
                                stdout=out, stderr=out, start_new_session=True)


def stop(process: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    if process.poll() is None:
        os.kill(process.pid, sig)
    process.wait(30)


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def due_times(db: str, schedule_id: str, interval_s: float = 1.0) -> tuple[list, list, list]:
    """Every due time of the schedule's records, expanded: (fired ones, skipped ones, the
    firings)."""
    firings = open_registry(db).schedules.firings(schedule_id, limit=10_000)
    fired, skipped = [], []
    step = timedelta(seconds=interval_s)
    for f in firings:
        due = _time(f["dueTime"])
        if f["outcome"] == "fired":
            fired += [due - step * i for i in range(f["count"])]
        else:
            skipped += [due + step * i for i in range(f["count"])]
    return fired, skipped, firings


def assert_each_due_time_once(times: list[datetime], interval_s: float = 1.0) -> None:
    """Consecutive due times, none twice, none missing."""
    ordered = sorted(times)
    assert len(ordered) == len(set(ordered)), "a due time was fired twice"
    gaps = [b - a for a, b in zip(ordered, ordered[1:])]
    assert all(g == timedelta(seconds=interval_s) for g in gaps), f"missed: {gaps}"


def wait_for(predicate, timeout_s: float, what: str, step_s: float = 0.1):
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        found = predicate()
        if found:
            return found
        time.sleep(step_s)
    raise AssertionError(f"timed out waiting for {what}")
