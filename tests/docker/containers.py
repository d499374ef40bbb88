"""Looking at the containers of the test dockerd (`.ci/docker start`)."""

from __future__ import annotations

import os
import subprocess
import time

from tests.components import environment


def containers(docker: dict[str, str], prefix: str) -> list[str]:
    """Names of the containers (running or exited) whose name starts with `prefix`."""
    out = subprocess.run([docker["docker"], "ps", "-a", "--format", "{{.Names}}"],
                         env={**os.environ, **environment(docker)}, capture_output=True,
                         text=True, timeout=30, check=True).stdout.split()
    return [n for n in out if n.startswith(prefix)]


def container_gone(docker: dict[str, str], prefix: str, within_s: float = 20) -> bool:
    """Whether no such container is left, waiting up to `within_s` for the last to go."""
    end = time.monotonic() + within_s
    while containers(docker, prefix):
        if time.monotonic() > end:
            return False
        time.sleep(0.2)
    return True
