"""Pilot workers: `steepy worker` started inside SLURM jobs (the pilot model of Parsl and
dask-jobqueue). Each job runs one worker against the shared database; the worker takes chains
like any other engine and exits when nothing is left to do, which ends its job.

The job runs the same Python as the submitter (a shared filesystem is assumed, as for the
data) in the submitter's working directory, with the submitter's environment (sbatch's
default `--export=ALL`, said explicitly), so `steepy.yaml', `STEEPY_*' settings and relative
service paths mean the same there. The database URL goes the same way (`STEEPY_DB_URL'), never
on a command line: a worker's command line is visible to every user of a node (`ps'), and a
PostgreSQL URL carries its password.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from dataclasses import dataclass, field

from steepy.errors import SteepyError

JOB_NAME = "steepy-worker"


class PilotError(SteepyError):
    """`sbatch' refused a pilot job (or could not be run)."""


@dataclass
class Pilots:
    """N worker jobs and how they are submitted."""

    count: int
    db: str  # the shared database every pilot works on (PostgreSQL for several)
    agents: int = 1  # agents per worker: chains it runs at once (and CPUs it asks for)
    services: list[str] = field(default_factory=list)
    macros: list[str] = field(default_factory=list)
    sbatch_args: list[str] = field(default_factory=list)
    output: str = "."  # where each job's output goes (steepy-worker-<job id>.out)
    workdir: str = "."
    sbatch: str = "sbatch"

    def worker_command(self) -> list[str]:
        argv = [sys.executable, "-m", "steepy", "worker",
                "--agents", str(self.agents), "--exit-when-idle"]
        for path in self.services:
            argv += ["--services", path]
        for path in self.macros:
            argv += ["--macros", path]
        return argv

    def sbatch_argv(self) -> list[str]:
        return [self.sbatch, "--parsable", f"--job-name={JOB_NAME}",
                f"--output={self.output}/{JOB_NAME}-%j.out", f"--chdir={self.workdir}",
                "--ntasks=1", f"--cpus-per-task={self.agents}", "--export=ALL",
                *self.sbatch_args, "--wrap", "exec " + shlex.join(self.worker_command())]

    def environment(self) -> dict[str, str]:
        """sbatch's environment, which the job gets: the submitter's, with the database."""
        return {**os.environ, "STEEPY_DB_URL": self.db}

    def submit(self) -> list[str]:
        """Submit the jobs; their ids."""
        ids = []
        for _ in range(self.count):
            try:
                done = subprocess.run(self.sbatch_argv(), capture_output=True, text=True,
                                      timeout=60, env=self.environment())
            except (OSError, subprocess.TimeoutExpired) as e:
                raise PilotError(f"cannot run {self.sbatch}: {e}") from e
            if done.returncode != 0:
                last = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
                raise PilotError(f"sbatch refused the pilot job: {last}")
            ids.append(done.stdout.strip().split(";")[0])
        return ids
