"""No tool runs twice at the same time: a tool does not outlive the engine that started it,
whether that engine is killed (its pid or its whole process group) or stopped with SIGTERM,
and the engine that takes its chains over never runs them beside leftovers: it waits until
the dead engine's executor (which ends every process of its tools, then exits) is gone.

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
from datetime import datetime
from pathlib import Path

import pytest

from steepy.registry import open_registry
from tests.registry.chains import store_chains

pytestmark = [pytest.mark.process]

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
    """Should a dead agent's tool still run here (its executor gone too) and its attempts name
    no executor (rows of old), the engine taking its chain over ends that tool, found by its
    environment, before the chain is registered again."""
    import asyncio
    import socket

    import psutil

    from steepy.engine.engine import Engine
    from steepy.generator import ProcessChainGenerator
    from tests.engine.test_engine import SERVICES, SLEEPY, _settings, _submit

    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    sid = _submit(registry, SLEEPY)
    submission = registry.leases.fetch_next_submission("dead-engine", 0.1)
    generator = ProcessChainGenerator(submission.workflow, str(tmp_path / "tmp"),
                                      str(tmp_path / "out"), SERVICES, {})
    store_chains(registry, sid, generator.generate(), generator.persist_state())
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
        await engine.recover()
        assert leftover.wait(5) is not None  # ended ...
        assert registry.views.get_chain(chain_id).status == "REGISTERED"  # ... before released
        assert registry.views.runs(chain_id)[-1].status == "AGENT_LOST"
        assert psutil.pid_exists(bystander.pid) and bystander.poll() is None  # not its run
    finally:
        for p in (leftover, bystander):
            if p.poll() is None:
                p.kill()
                p.wait()


# -- the executor of a dead engine ------------------------------------------------------------


def _lost_run(registry, tmp_path: Path, engine_pid: int | None = None):
    """A chain claimed by an agent `ghost' of this host that stopped sending heartbeats."""
    import socket

    from steepy.generator import ProcessChainGenerator
    from tests.engine.test_engine import SERVICES, SLEEPY, _submit

    sid = _submit(registry, SLEEPY)
    submission = registry.leases.fetch_next_submission("dead-engine", 0.1)
    generator = ProcessChainGenerator(submission.workflow, str(tmp_path / "tmp"),
                                      str(tmp_path / "out"), SERVICES, {})
    store_chains(registry, sid, generator.generate(), generator.persist_state())
    registry.leases.heartbeat("dead-engine", [{"id": "ghost", "host": socket.gethostname(),
                                               "pid": engine_pid}], 0.1)
    record, run = registry.queue.claim_chain("ghost")
    return record.chain.id, run


def _record_attempt(registry, chain_id: str, run: int, executor: tuple[int, float] | None,
                    pgid: int, started: datetime) -> None:
    """The row the dead engine wrote when its attempt started: its start time is taken
    before the tool is spawned, as the agent takes it (a row stamped after the tool had
    started, late on a loaded machine, was older than the 1 s the leftover search allows)."""
    import socket

    from sqlalchemy import insert

    from steepy.registry.tables import attempts

    with registry.db.write() as conn:
        conn.execute(insert(attempts).values(
            chain_id=chain_id, run_number=run, executable_id="e", service_id="sleep",
            attempt=1, ordinal=1, start_time=started, outcome="RUNNING",
            host=socket.gethostname(), executor_pid=None if executor is None else executor[0],
            executor_started=None if executor is None else executor[1], pgid=pgid))


STUBBORN = ("import os, signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "open(sys.argv[1], 'w').write(str(os.getpgid(0))); time.sleep(60)")


@pytest.mark.parametrize("executor_too", [False, True])
async def test_recovery_waits_for_the_dead_engines_executor(tmp_path: Path, caplog,
                                                           executor_too: bool) -> None:
    """A chain of a dead engine is registered again only once that engine's executor has
    ended its tool (it ignores SIGTERM: the executor waits out the grace period, then
    SIGKILL) and is gone; should the executor have been killed too, the tool's recorded
    process group is ended instead."""
    import asyncio
    import logging

    import psutil

    from steepy.engine.engine import Engine
    from tests.agent.test_executor import running, start_engine
    from tests.engine.test_engine import SERVICES, _settings

    from steepy.model.common import utcnow

    pgid_file = tmp_path / "pgid"
    started = utcnow()
    dead, executor_pid = start_engine(tmp_path, [[sys.executable, "-S", "-c", STUBBORN,
                                                  str(pgid_file)]], grace_ms=1500)
    try:
        _wait(lambda: pgid_file.exists() and pgid_file.read_text(), 30, "the tool")
        tool = int(pgid_file.read_text())
        executor = (executor_pid, psutil.Process(executor_pid).create_time())
        registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
        chain_id, run = _lost_run(registry, tmp_path, dead.pid)
        _record_attempt(registry, chain_id, run, executor, tool, started)
        os.kill(dead.pid, signal.SIGKILL)
        dead.wait()
        if executor_too:
            os.kill(executor_pid, signal.SIGKILL)
        await asyncio.sleep(0.3)  # the ghost's heartbeat is older than the lease now
        engine = Engine(registry, SERVICES, {}, _settings(tmp_path))
        engine.settings.lease_s = 0.2  # (waits up to 0.1 s per round for the executor)
        with caplog.at_level(logging.WARNING, logger="steepy.engine.engine"):
            await engine.recover()
            if not executor_too:  # the executor still waits out the grace period
                assert registry.views.get_chain(chain_id).status == "RUNNING"
                assert running(tool)
                assert f"waits for executor process {executor_pid}" in caplog.text
                end = time.monotonic() + 10
                while registry.views.get_chain(chain_id).status == "RUNNING" \
                        and time.monotonic() < end:
                    await engine.recover()
                    await asyncio.sleep(0.1)
        assert not running(tool)
        assert not running(executor_pid)
        assert registry.views.get_chain(chain_id).status == "REGISTERED"
        if executor_too:
            assert "ended 1 leftover process(es)" in caplog.text
    finally:
        if dead.poll() is None:
            os.killpg(dead.pid, signal.SIGKILL)
            dead.wait()
        for pid in (executor_pid, int(pgid_file.read_text() or 0) if pgid_file.exists() else 0):
            try:
                if pid and running(pid):
                    os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


async def test_recovery_finds_an_unrecorded_executor_by_its_command_line(tmp_path: Path) -> None:
    """The dead engine died before it recorded its attempt: its executor is found by the
    engine's pid on its command line, and waited for all the same."""
    import asyncio

    from steepy.engine.engine import Engine
    from tests.agent.test_executor import running, start_engine
    from tests.engine.test_engine import SERVICES, _settings

    pgid_file = tmp_path / "pgid"
    dead, executor_pid = start_engine(tmp_path, [[sys.executable, "-S", "-c", STUBBORN,
                                                  str(pgid_file)]], grace_ms=1000)
    try:
        _wait(lambda: pgid_file.exists() and pgid_file.read_text(), 30, "the tool")
        tool = int(pgid_file.read_text())
        registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
        chain_id, run = _lost_run(registry, tmp_path, dead.pid)
        os.kill(dead.pid, signal.SIGKILL)
        dead.wait()
        await asyncio.sleep(0.3)
        engine = Engine(registry, SERVICES, {}, _settings(tmp_path))
        engine.settings.lease_s = 0.2
        await engine.recover()  # at once: the executor waits out the grace period (1 s)
        assert registry.views.get_chain(chain_id).status == "RUNNING" and running(tool)
        end = time.monotonic() + 10
        while registry.views.get_chain(chain_id).status == "RUNNING" and time.monotonic() < end:
            await asyncio.sleep(0.1)
            await engine.recover()
        # released only once both were gone (neither comes back)
        assert registry.views.get_chain(chain_id).status == "REGISTERED"
        assert not running(tool) and not running(executor_pid)
    finally:
        if dead.poll() is None:
            os.killpg(dead.pid, signal.SIGKILL)
            dead.wait()


# -- kill -9 at random moments ----------------------------------------------------------------

def _starts(folder: Path) -> int:
    """How often a tool began its work (each start is one line)."""
    return sum(len(p.read_text().split()) for p in _files(folder, ".starts"))


ENV_TOOL = """#!/usr/bin/env python3
# twin: hold a lock beside the output while working (a child and a double-forked daemon hold
# it too, the daemon longer than the tool runs); a twin finds it taken
import fcntl, os, subprocess, sys, time
out = sys.argv[1]
lock = os.open(out + ".lock", os.O_WRONLY | os.O_CREAT, 0o644)
try:
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
except BlockingIOError:
    with open(out + ".twins", "a") as f:
        f.write("twin %d\\n" % os.getpid())
    sys.exit(3)
with open(out + ".starts", "a") as f:
    f.write("%d\\n" % os.getpid())
if os.fork() == 0:  # a daemon: new session, its parent exits, it holds the lock a while
    os.setsid()     # with an empty environment
    if os.fork():
        os._exit(0)
    os.set_inheritable(lock, True)
    os.execve("/bin/sh", ["sh", "-c", "exec sleep 5"], {})
os.wait()
subprocess.run(["sleep", "3"], pass_fds=[lock])
with open(out, "w") as f:
    f.write("done\\n")
"""


def _tools_running(tool: Path) -> list[int]:
    import psutil

    found = []
    for p in psutil.process_iter(["cmdline"]):
        if any(str(tool) in part for part in p.info["cmdline"] or []):
            found.append(p.pid)
    return found


def test_kill_9_at_random_moments_never_leaves_a_tool_nor_runs_one_twice(tmp_path: Path) -> None:
    """Workers are killed with SIGKILL (their pid or their whole group, in turns) at random
    moments, in turns of three: while the engine starts; while `#!/usr/bin/env python3`
    execs its way to the interpreter (through pyenv's shim where there is one: as soon as
    a tool's first process shows); while the tools run (at a random moment of their first
    second: after a tool wrote its start, whenever that is on a loaded machine). After
    each kill,
    nothing of the dead worker's tools is left once its executor has gone (and it goes within
    the grace period and a little more); the next worker takes the chains over without ever
    running a tool beside a copy of itself; a last one finishes the submission."""
    import random

    from steepy.agent.leftovers import orphaned_executors

    env, common = _setup(tmp_path)
    tool = tmp_path / "twin.py"
    tool.write_text(ENV_TOOL)
    tool.chmod(0o755)
    (tmp_path / "services.yaml").write_text(SERVICE.format(path=tool))
    submitted = subprocess.run(_steepy("submit", str(tmp_path / "wf.yaml"), *common), env=env,
                               cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert submitted.returncode == 0, submitted.stderr
    sid = submitted.stdout.split()[-1]
    seed = random.randrange(1 << 30)
    rnd = random.Random(seed)
    kills = hits = running = 0
    registry = open_registry(common[1])
    # no wall-clock budget: on a loaded machine a worker takes many seconds to start its tools
    # (a fresh clone's run at load 10 killed 8 workers in 45 s before any tool started)
    while kills < 7 and registry.views.get_submission(sid).status != "SUCCESS":
        worker = subprocess.Popen(_steepy("worker", "--agents", str(CHAINS), *common), env=env,
                                  cwd=tmp_path, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            if kills % 3 == 1:  # as soon as a tool appears: inside its chain of execs
                end = time.monotonic() + 60
                while not _tools_running(tool) and time.monotonic() < end:
                    time.sleep(0.005)
                assert _tools_running(tool), f"no tool started within 60 s (seed {seed})"
                hits += 1
            elif kills % 3 == 2:  # while they run (each takes 3 s): after a new start
                before = _starts(tmp_path)
                end = time.monotonic() + 60
                while _starts(tmp_path) == before and time.monotonic() < end:
                    time.sleep(0.01)
                assert _starts(tmp_path) > before, f"no tool ran within 60 s (seed {seed})"
                running += 1
                time.sleep(rnd.uniform(0.0, 1.0))
            else:  # while the engine starts (about a second, more on a loaded machine)
                time.sleep(rnd.uniform(0.0, 1.0))
            if kills % 2:
                os.killpg(worker.pid, signal.SIGKILL)
            else:
                os.kill(worker.pid, signal.SIGKILL)
            worker.wait(30)
        finally:
            if worker.poll() is None:
                os.killpg(worker.pid, signal.SIGKILL)
                worker.wait()
        kills += 1
        # its executor ends every tool (SIGTERM, 1 s of grace, SIGKILL) and then itself
        _wait(lambda: not orphaned_executors(worker.pid), 10,
              f"the executor of the killed worker to end (seed {seed})")
        assert _tools_running(tool) == [], f"a tool outlived its worker (seed {seed})"
        assert all(_lock_free(p) for p in _files(tmp_path, ".lock")), f"seed {seed}"
        assert _files(tmp_path, ".twins") == [], f"seed {seed}"
    assert kills >= 4, f"seed {seed}"  # (the tools take 3 s: no worker finished them)
    assert hits >= 1 and running >= 1, f"seed {seed}"  # the kills came at each moment
    again = subprocess.run(_steepy("worker", "--agents", str(CHAINS), "--exit-when-idle", *common),
                           env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert _files(tmp_path, ".twins") == [], f"seed {seed}"
    assert _tools_running(tool) == []
    assert registry.views.get_submission(sid).status == "SUCCESS", f"seed {seed}"
    for record in registry.views.list_chains(sid)[0]:
        statuses = [r.status for r in registry.views.runs(record.chain.id)]
        assert statuses[-1] == "SUCCESS" and statuses.count("SUCCESS") == 1, statuses
