"""The engine with `runtimes.default: slurm` against the real cluster, as a user drives it:
`steepy run` of a workflow whose tools become SLURM jobs, `steepy cancel` ending the job, and
`kill -9` of the engine (and of its executor) followed by `steepy worker`: the jobs are found
and handled, the submission ends in SUCCESS, and no chain's job ever runs twice at once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from steepy.registry import open_registry
from tests.components import component, environment
from tests.conftest import ROOT
from tests.engine.test_recovery import _env
from tests.engine.workflows import slowprint_fan_out
from tests.runtimes.slurm.cluster import ended, run

pytestmark = pytest.mark.timeout(900)

FAN_OUT = slowprint_fan_out(3, lines=6, interval=0.5)
SLEEPY = "api: 4.7.0\nactions:\n  - {type: execute, service: sleep, inputs: [{id: seconds, value: 60}]}\n"


@pytest.fixture(scope="module")
def slurm() -> dict[str, str]:
    return component("slurm")


def _slurm_env(tmp_path: Path, slurm: dict) -> dict[str, str]:
    return {**_env(tmp_path), **environment(slurm), "STEEPY_RUNTIMES_DEFAULT": "slurm",
            "STEEPY_RUNTIMES_SLURM_PARTITION": slurm["partition"]}


def _steepy(*args: str) -> list[str]:
    return [sys.executable, "-m", "steepy", *args, "--services", str(ROOT / "services")]


def _steepy_jobs(slurm: dict, chains: set[str] | None = None) -> dict[str, int]:
    """Jobs of steepy's chains (of `chains' only, if given) that are pending, running or
    completing, by name, with how many there are of each (other tests' jobs may run too)."""
    counts: dict[str, int] = {}
    for name in run(slurm, "squeue", "--noheader", "--format=%j").split():
        chain = name.removeprefix("steepy-")
        if name.startswith("steepy-") and name != "steepy-worker" and (
                chains is None or chain in chains):
            counts[name] = counts.get(name, 0) + 1
    return counts


def test_run_then_cancel_ends_the_job(slurm, tmp_path) -> None:
    workflow = tmp_path / "w.yaml"
    workflow.write_text(SLEEPY)
    db = f"sqlite:///{tmp_path / 'db.sqlite'}"
    registry = open_registry(db)
    engine = subprocess.Popen(_steepy("run", str(workflow), "--db", db, "--json"), cwd=ROOT,
                              env=_slurm_env(tmp_path, slurm), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 60
        while time.monotonic() < end:
            chains = registry.views.list_chains(status="RUNNING")[0]
            names = [f"steepy-{c.chain.id}" for c in chains]
            if names and all(n in _steepy_jobs(slurm, {c.chain.id for c in chains})
                             for n in names):
                break
            time.sleep(0.1)
        else:
            raise AssertionError("no job of the chain ever ran")
        (submission,), _ = registry.views.list_submissions()
        cancel = subprocess.run(_steepy("cancel", submission.id, "--db", db)[:-2], cwd=ROOT,
                                env=_slurm_env(tmp_path, slurm), capture_output=True, text=True,
                                timeout=60)
        assert cancel.returncode == 0, cancel.stderr
        out, err = engine.communicate(timeout=60)
    finally:
        if engine.poll() is None:
            engine.kill()
    assert json.loads(out)["status"] == "CANCELLED", err
    assert all(ended(slurm, n) for n in names)


def test_kill_9_of_the_engine_then_a_worker_runs_no_job_twice(slurm, tmp_path) -> None:
    workflow = tmp_path / "w.yaml"
    workflow.write_text(FAN_OUT)
    db = f"sqlite:///{tmp_path / 'db.sqlite'}"
    registry = open_registry(db)
    env = _slurm_env(tmp_path, slurm)
    victim = subprocess.Popen(_steepy("run", str(workflow), "--db", db, "--agents", "3"),
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    end = time.monotonic() + 60
    chains: set[str] = set()
    while time.monotonic() < end and len(_steepy_jobs(slurm, chains)) < 3:
        chains = {c.chain.id for c in registry.views.list_chains()[0]}
        time.sleep(0.1)
    assert len(_steepy_jobs(slurm, chains)) == 3, "the jobs never ran"
    (submission,), _ = registry.views.list_submissions()
    os.killpg(victim.pid, signal.SIGKILL)  # the engine and everything in its group
    victim.wait()

    seen: list[dict[str, int]] = []
    worker = subprocess.Popen(_steepy("worker", "--db", db, "--agents", "3", "--exit-when-idle"),
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    while worker.poll() is None:
        seen.append(_steepy_jobs(slurm, chains))
        time.sleep(0.1)
    stderr = worker.stderr.read()
    assert worker.returncode == 0, stderr
    assert all(count == 1 for jobs in seen for count in jobs.values()), (seen, stderr)
    after = registry.views.get_submission(submission.id)
    assert after.status == "SUCCESS", (after.error_message, stderr)
    records, total = registry.views.list_chains(submission.id)
    assert total == 3
    for record in records:
        statuses = [r.status for r in registry.views.runs(record.chain.id)]
        assert statuses.count("SUCCESS") == 1, (statuses, stderr)


def test_the_example_workflow_sorts_on_the_cluster(slurm, tmp_path) -> None:
    db = f"sqlite:///{tmp_path / 'db.sqlite'}"
    done = subprocess.run(_steepy("run", str(ROOT / "workflows" / "slurm.yaml"), "--db", db,
                                  "--json"), cwd=ROOT, env=_slurm_env(tmp_path, slurm),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "SUCCESS"
    words = (ROOT / "workflows" / "data" / "words.txt").read_text().splitlines()
    assert Path(result["results"]["sorted_words"][0]).read_text().splitlines() == sorted(words)
