"""No tool runs twice at the same time: a tool does not outlive the engine that started it,
whether that engine is killed (its pid or its whole process group) or stopped with SIGTERM,
and the engine that takes its chains over never runs them beside leftovers.

The tool takes an exclusive flock on a file beside its output for its whole life (a child
`sleep` inherits the lock too): a second copy running at the same time finds the lock taken
and records a twin.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from steepy.registry import open_registry

CHAINS = 4
TOOL = """#!/bin/sh
# twin: hold a lock beside the output while working; a twin finds it taken
out="$1"
exec 9>"$out.lock"
if ! flock -n 9; then echo "twin $$" >> "$out.twins"; exit 3; fi
echo "$$" >> "$out.starts"
sleep 6 &
wait
echo done > "$out"
"""
SERVICE = """
- id: twin
  name: Twin detector
  description: Works for a while holding a lock beside its output
  path: {path}
  runtime: other
  parameters:
    - {{id: output_file, name: Output, description: out, type: output, cardinality: 1..1,
       dataType: string}}
"""
WORKFLOW = """
api: 4.7.0
name: twins
vars:
  - {id: items, value: [%s]}
actions:
  - type: for
    input: items
    enumerator: i
    output: outs
    yieldToOutput: o
    actions:
      - {id: work, type: execute, service: twin, outputs: [{id: output_file, var: o}]}
""" % ", ".join(f'"{i}"' for i in range(CHAINS))


def _setup(tmp_path: Path) -> tuple[dict[str, str], list[str]]:
    tool = tmp_path / "twin.sh"
    tool.write_text(TOOL)
    tool.chmod(0o755)
    (tmp_path / "services.yaml").write_text(SERVICE.format(path=tool))
    (tmp_path / "wf.yaml").write_text(WORKFLOW)
    env = dict(os.environ)
    env.update(STEEPY_TMPPATH=str(tmp_path / "tmp"), STEEPY_OUTPATH=str(tmp_path / "out"),
               STEEPY_LOGS_PROCESSCHAINS_PATH=str(tmp_path / "logs"),
               STEEPY_CONTROLLER_LEASETIMEOUT="1s", STEEPY_CONTROLLER_HEARTBEATINTERVAL="200ms",
               STEEPY_SCHEDULER_LOOKUPINTERVAL="200ms", STEEPY_AGENT_KILLGRACEPERIOD="1s")
    db = f"sqlite:///{tmp_path / 'steepy.db'}"
    common = ["--db", db, "--services", str(tmp_path / "services.yaml")]
    return env, common


def _steepy(*args: str) -> list[str]:
    return [sys.executable, "-m", "steepy.cli", *args]


def _files(tmp_path: Path, suffix: str) -> list[Path]:
    return sorted((tmp_path / "tmp").rglob(f"*{suffix}"))


def _wait(condition, timeout_s: float, what: str) -> None:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _lock_free(path: Path) -> bool:
    with open(path, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(f, fcntl.LOCK_UN)
        return True


@pytest.mark.parametrize("how", ["kill-pid", "kill-group", "sigterm"])
def test_no_tool_runs_twice(tmp_path: Path, how: str) -> None:
    env, common = _setup(tmp_path)
    submitted = subprocess.run(_steepy("submit", str(tmp_path / "wf.yaml"), *common), env=env,
                               cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert submitted.returncode == 0, submitted.stderr
    sid = submitted.stdout.split()[-1]
    worker = subprocess.Popen(_steepy("worker", "--agents", str(CHAINS), *common), env=env,
                              cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              start_new_session=True)
    try:
        _wait(lambda: len(_files(tmp_path, ".starts")) == CHAINS, 60, "every tool to start")
        if how == "kill-pid":
            os.kill(worker.pid, signal.SIGKILL)
        elif how == "kill-group":
            os.killpg(worker.pid, signal.SIGKILL)
        else:
            os.kill(worker.pid, signal.SIGTERM)
        worker.wait(60)
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
        worker.stderr.close()
    # the tools end with their engine: nobody holds a lock any more (well before they would
    # have ended by themselves, 6 s after they started)
    locks = _files(tmp_path, ".lock")
    assert len(locks) == CHAINS
    _wait(lambda: all(_lock_free(p) for p in locks), 4, "the dead engine's tools to end")

    again = subprocess.run(_steepy("worker", "--agents", str(CHAINS), "--exit-when-idle", *common),
                           env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert _files(tmp_path, ".twins") == []
    registry = open_registry(common[1])
    assert registry.views.get_submission(sid).status == "SUCCESS"
    for record in registry.views.list_chains(sid)[0]:
        statuses = [r.status for r in registry.views.runs(record.chain.id)]
        assert statuses[-1] == "SUCCESS" and statuses.count("SUCCESS") == 1, statuses


async def test_recovery_ends_leftovers_of_a_lost_run_on_this_host(tmp_path: Path) -> None:
    """Should a dead agent's tool still run here (its guardian gone too), the engine taking
    its chain over ends that tool before the chain is registered again."""
    import asyncio
    import socket

    import psutil

    from steepy.engine import Engine
    from steepy.generator import ProcessChainGenerator
    from tests.engine.test_engine import SERVICES, SLEEPY, _settings, _submit

    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    sid = _submit(registry, SLEEPY)
    submission = registry.leases.fetch_next_submission("dead-engine", 0.1)
    generator = ProcessChainGenerator(submission.workflow, str(tmp_path / "tmp"),
                                      str(tmp_path / "out"), SERVICES, {})
    registry.submissions.add_chains(sid, generator.generate(), generator.persist_state())
    registry.leases.heartbeat("dead-engine", [{"id": "ghost", "host": socket.gethostname()}], 0.1)
    record, run = registry.queue.claim_chain("ghost")
    chain_id = record.chain.id
    # the dead run's tool, still running (in a session of its own, like every tool)
    env = {**os.environ, "STEEPY_PROCESS_CHAIN_ID": chain_id, "STEEPY_RUN_NUMBER": str(run)}
    leftover = subprocess.Popen(["sleep", "60"], env=env, start_new_session=True)
    bystander = subprocess.Popen(["sleep", "60"], env={**env, "STEEPY_RUN_NUMBER": str(run + 1)},
                                 start_new_session=True)
    try:
        await asyncio.sleep(0.3)  # the ghost's heartbeat is older than the lease now
        engine = Engine(registry, SERVICES, {}, _settings(tmp_path))
        engine.settings.lease_s = 0.2
        await engine._recover()
        assert leftover.wait(5) is not None  # ended ...
        assert registry.views.get_chain(chain_id).status == "REGISTERED"  # ... before released
        assert registry.views.runs(chain_id)[-1].status == "AGENT_LOST"
        assert psutil.pid_exists(bystander.pid) and bystander.poll() is None  # not its run
    finally:
        for p in (leftover, bystander):
            if p.poll() is None:
                p.kill()
                p.wait()
