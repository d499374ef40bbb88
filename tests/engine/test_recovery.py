"""kill -9 of a running `steepy run`, then `steepy worker`: the submission ends as if
nothing had happened, and no chain that had succeeded runs again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from steepy.registry import open_registry
from tests.conftest import ROOT
import pytest

pytestmark = [pytest.mark.process]

WORKFLOW = """
api: 4.7.0
name: recoverable fan-out
vars:
  - {id: items, value: ["1", "2", "3", "4", "5", "6"]}
actions:
  - type: for
    input: items
    enumerator: i
    output: parts
    yieldToOutput: part
    actions:
      - id: print
        type: execute
        service: slowprint
        inputs: [{id: lines, value: 3}, {id: interval, value: 0.25}]
        outputs: [{id: output_file, var: part}]
  - id: join
    type: execute
    service: cat
    inputs: [{id: input_files, var: parts}]
    outputs: [{id: output_file, var: joined, store: true}]
"""


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(STEEPY_TMPPATH=str(tmp_path / "tmp"), STEEPY_OUTPATH=str(tmp_path / "out"),
               STEEPY_LOGS_PROCESSCHAINS_PATH=str(tmp_path / "logs"),
               STEEPY_CONTROLLER_LEASETIMEOUT="2s", STEEPY_CONTROLLER_HEARTBEATINTERVAL="300ms",
               STEEPY_SCHEDULER_LOOKUPINTERVAL="300ms", STEEPY_AGENT_KILLGRACEPERIOD="1s")
    return env


def _steepy(*args: str) -> list[str]:
    return [sys.executable, "-m", "steepy.cli", *args, "--services", str(ROOT / "services")]


def _run_to_end(tmp_path: Path, db: str, workflow: Path) -> dict:
    out = subprocess.run(_steepy("run", str(workflow), "--db", db, "--agents", "2", "--json"),
                         cwd=ROOT, env=_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_kill_and_restart(tmp_path: Path) -> None:
    workflow = tmp_path / "w.yaml"
    workflow.write_text(WORKFLOW)
    calm = _run_to_end(tmp_path / "calm", f"sqlite:///{tmp_path / 'calm.db'}", workflow)

    db = f"sqlite:///{tmp_path / 'crash.db'}"
    registry = open_registry(db)
    env = _env(tmp_path / "crash")
    victim = subprocess.Popen(_steepy("run", str(workflow), "--db", db, "--agents", "2"), cwd=ROOT,
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # kill once some chains succeeded and others run
        found, _ = registry.views.list_submissions()
        counts = registry.views.chain_counts(found[0].id) if found else {}
        if counts.get("SUCCESS", 0) >= 1 and counts.get("RUNNING", 0) >= 1:
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the run never reached a state worth killing")
    succeeded_before = {c.chain.id for c in registry.views.list_chains(status="SUCCESS")[0]}
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    sid = found[0].id
    assert registry.views.get_submission(sid).status == "RUNNING"

    restart = subprocess.run(_steepy("worker", "--db", db, "--agents", "2", "--exit-when-idle"),
                             cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert restart.returncode == 0, restart.stderr

    after = registry.views.get_submission(sid)
    assert after.status == calm["status"] == "SUCCESS"
    assert set(after.results) == set(calm["results"])
    joined = Path(after.results["joined"][0]).read_text().splitlines()
    assert len(joined) == 6 * 3  # every part, each once
    chains, total = registry.views.list_chains(sid)
    assert total == calm["totalProcessChains"] == 7
    for record in chains:
        statuses = [r.status for r in registry.views.runs(record.chain.id)]
        assert statuses.count("SUCCESS") == 1, (record.chain.id, statuses)
        if record.chain.id in succeeded_before:
            assert statuses == ["SUCCESS"]  # never run again
