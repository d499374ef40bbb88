"""Agent tests: no test may leave a process of its own behind."""

from __future__ import annotations

import time

import psutil
import pytest

from steepy.agent.executor import identity
from tests.agent.harness import alive as _alive




def _children() -> list[psutil.Process]:
    return [p for p in psutil.Process().children(recursive=True) if _alive(p)]


@pytest.fixture(autouse=True)
def no_leftover_processes():
    """Fails the test if a child process of pytest started by it survives it."""
    before = {p.pid for p in _children()}
    yield
    give_up = time.monotonic() + 1.0
    while True:
        # the process's executor (steepy.agent.executor) lives as long as pytest
        executor = (identity() or (None,))[0]
        left = [p for p in _children() if p.pid not in before and p.pid != executor]
        if not left or time.monotonic() > give_up:
            break
        time.sleep(0.02)
    if left:
        names = []
        for p in left:
            try:
                names.append(f"{p.pid} {' '.join(p.cmdline())}")
                p.kill()
            except psutil.Error:
                pass
        pytest.fail("processes left behind: " + "; ".join(names))
