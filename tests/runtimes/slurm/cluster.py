"""Looking at the jobs of the test cluster (`.ci/slurm start`)."""

from __future__ import annotations

import os
import subprocess

from tests.components import environment
from tests.waiting import gone


def run(info: dict[str, str], *argv: str) -> str:
    return subprocess.run(list(argv), env={**os.environ, **environment(info)},
                          capture_output=True, text=True, timeout=30, check=True).stdout


def jobs_named(info: dict[str, str], name: str) -> list[str]:
    """Ids of the pending, running or completing jobs of that name."""
    return run(info, "squeue", "--noheader", "--format=%i", f"--name={name}").split()


def job_state(info: dict[str, str], job_id: str) -> str:
    fields = dict(f.split("=", 1) for f in run(info, "scontrol", "show", "job", "-o", job_id).split()
                  if "=" in f)
    return fields["JobState"]


def ended(info: dict[str, str], name: str, within_s: float = 20) -> bool:
    """Whether no job of that name is left (pending, running or completing)."""
    return gone(lambda: jobs_named(info, name), within_s)


def processes_with(marker: str) -> list[int]:
    """Pids of the processes whose command line mentions `marker'."""
    import psutil

    return [p.pid for p in psutil.process_iter(["cmdline"])
            if any(marker in part for part in (p.info["cmdline"] or []))]
