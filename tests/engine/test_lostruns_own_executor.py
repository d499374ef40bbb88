"""A lost run of an engine of this very process (the Python API: an engine that stopped on a
bug, another one started beside it) names this process's executor, which serves the live
engine and never ends: the run was held back for ever (`make test` once timed out on it).
Its tools, were any left, are ended by their process groups instead."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import subprocess
import uuid

import pytest

from steepy.agent.executor import executor, identity
from steepy.engine.lostruns import LostRuns
from steepy.model.attempt import RUNNING

pytestmark = pytest.mark.process


# the run's chain: recovery ends every process of this machine whose environment names the
# chain and run (steepy.agent.leftovers.end_run_leftovers), so a chain id other tests use
# (`c', run 1) ended another test's tool as it ran (a full run failed once on it)
CHAIN = f"lost-{uuid.uuid4().hex}"


def _run(pid: int, started: float, pgid: int | None = None, since: float | None = None) -> dict:
    host = socket.gethostname()
    return {"chainId": CHAIN, "runNumber": 1, "host": host, "enginePid": os.getpid(),
            "attempts": [{"host": host, "executorPid": pid, "executorStarted": started,
                          "pgid": pgid, "startTime": since, "outcome": RUNNING}]}


async def test_a_lost_run_naming_this_processs_executor_is_not_held_back() -> None:
    executor()  # (started if this process had none)
    pid, started = identity()
    loop = asyncio.get_running_loop()
    lost = LostRuns(logging.getLogger("test"))
    began = loop.time()
    assert await lost.ended_here(_run(pid, started), 0.5, began + 5, {}) is True
    assert loop.time() - began < 4  # (not waited for until the end of the round)


async def test_a_tool_it_left_is_ended_by_its_group() -> None:
    executor()
    pid, started = identity()
    import psutil

    tool = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        since = psutil.Process(tool.pid).create_time()
        lost = LostRuns(logging.getLogger("test"))
        loop = asyncio.get_running_loop()
        run = _run(pid, started, pgid=tool.pid, since=since - 1)
        assert await lost.ended_here(run, 0.5, loop.time() + 5, {}) is True
        assert tool.wait(10) == -signal.SIGTERM
    finally:
        tool.kill()
        tool.wait()
