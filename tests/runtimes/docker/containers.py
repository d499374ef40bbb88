"""Looking at the containers of the test dockerd (`.ci/docker start`)."""

from __future__ import annotations

import os
import subprocess

from tests.components import environment
from tests.waiting import gone


def containers(docker: dict[str, str], prefix: str) -> list[str]:
    """Names of the containers (running or exited) whose name starts with `prefix`."""
    out = subprocess.run([docker["docker"], "ps", "-a", "--format", "{{.Names}}"],
                         env={**os.environ, **environment(docker)}, capture_output=True,
                         text=True, timeout=30, check=True).stdout.split()
    return [n for n in out if n.startswith(prefix)]


def container_gone(docker: dict[str, str], prefix: str, within_s: float = 20) -> bool:
    """Whether no such container is left, waiting up to `within_s` for the last to go."""
    return gone(lambda: containers(docker, prefix), within_s)
