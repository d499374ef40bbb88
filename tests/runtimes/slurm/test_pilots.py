"""Pilot workers (`steepy slurm-workers N`): N SLURM jobs each run `steepy worker
--exit-when-idle` against the shared PostgreSQL, run the chains of a submission there and end
by themselves, against the real cluster."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from steepy.cli import main
from steepy.engine.pilots import JOB_NAME, Pilots
from steepy.registry import open_registry
from tests.components import component, environment
from tests.conftest import ROOT
from tests.engine.workflows import slowprint_fan_out
from tests.runtimes.slurm.cluster import ended, job_state

pytestmark = [pytest.mark.timeout(900), pytest.mark.slurm, pytest.mark.process]

FAN_OUT = slowprint_fan_out(6, lines=2, interval=0.3)


def test_two_pilots_run_a_submission_and_end_by_themselves(postgres_url, tmp_path,
                                                           monkeypatch) -> None:
    slurm = component("slurm")
    env = {**os.environ, **environment(slurm), "STEEPY_TMPPATH": str(tmp_path / "tmp"),
           "STEEPY_OUTPATH": str(tmp_path / "out"),
           "STEEPY_LOGS_PROCESSCHAINS_PATH": str(tmp_path / "logs")}
    workflow = tmp_path / "w.yaml"
    workflow.write_text(FAN_OUT)
    submit = subprocess.run([sys.executable, "-m", "steepy", "submit", str(workflow), "--db",
                             postgres_url, "--services", str(ROOT / "services")], cwd=ROOT,
                            env=env, capture_output=True, text=True, timeout=60)
    assert submit.returncode == 0, submit.stderr
    monkeypatch.chdir(ROOT)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    result = CliRunner().invoke(main, ["slurm-workers", "2", "--db", postgres_url, "--agents", "2",
                                       "--services", str(ROOT / "services"),
                                       "--output", str(tmp_path),
                                       "--sbatch-args", f"-p {slurm['partition']}"])
    assert result.exit_code == 0, result.output
    jobs = result.output.split()
    assert len(jobs) == 2 and all(j.isdigit() for j in jobs)
    assert ended(slurm, JOB_NAME, within_s=120), "the pilots did not end by themselves"
    assert [job_state(slurm, j) for j in jobs] == ["COMPLETED", "COMPLETED"]
    registry = open_registry(postgres_url)
    (submission,), _ = registry.views.list_submissions()
    assert submission.status == "SUCCESS", submission.error_message
    chains, total = registry.views.list_chains(submission.id)
    assert total == 6
    outputs = [(tmp_path / f"{JOB_NAME}-{j}.out").read_text() for j in jobs]
    assert all("worker" in text for text in outputs), outputs  # each said who it is


def test_the_job_runs_this_python_here_on_the_shared_database() -> None:
    pilots = Pilots(2, "postgresql://db.example/steepy", agents=4, services=["/s"],
                    sbatch_args=["-p", "long"], output="/logs", workdir="/work")
    argv = pilots.sbatch_argv()
    assert argv[:8] == ["sbatch", "--parsable", "--job-name=steepy-worker",
                        "--output=/logs/steepy-worker-%j.out", "--chdir=/work", "--ntasks=1",
                        "--cpus-per-task=4", "--export=ALL"]
    assert argv[8:11] == ["-p", "long", "--wrap"]
    assert argv[11] == (f"exec {sys.executable} -m steepy worker --agents 4 --exit-when-idle "
                        "--services /s")


def test_the_database_url_reaches_the_job_by_its_environment_not_a_command_line() -> None:
    """A worker's command line is visible to every user of the node, and a PostgreSQL URL
    carries its password."""
    url = "postgresql://steepy:s3cret@db.example/steepy"
    pilots = Pilots(1, url)
    assert not any("s3cret" in part for part in pilots.sbatch_argv())
    assert pilots.environment()["STEEPY_DB_URL"] == url


def test_no_database_is_bad_input(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STEEPY_DB_URL", raising=False)
    result = CliRunner().invoke(main, ["slurm-workers", "1"])
    assert result.exit_code == 2
    assert "pilot workers need the shared database" in result.output
