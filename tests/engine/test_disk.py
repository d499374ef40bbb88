"""A full or read-only disk under the database: commands say so in one line (exit 4), a
worker whose disk fills keeps its state, says what happened, backs off and carries on once
there is room again; and an engine whose task dies of a bug stops instead of keeping its
leases.

The disk is a real one: a small tmpfs mounted for the test (root only)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from steepy.engine.engine import Engine
from steepy.model.submission import SubmissionStatus as SS
from steepy.registry import open_registry
from tests.components import unavailable
from tests.conftest import ROOT
from tests.engine.test_engine import MACROS, SERVICES, SLEEPY, _settings, _submit

pytestmark = [pytest.mark.process]

FAN_OUT = """
api: 4.7.0
name: four naps
vars:
  - {id: items, value: ["1", "2", "3", "4"]}
actions:
  - type: for
    input: items
    enumerator: i
    actions:
      - {id: nap, type: execute, service: sleep, inputs: [{id: seconds, value: 1}]}
"""


@pytest.fixture
def disk(tmp_path: Path):
    """A 4 MB file system of its own."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        unavailable(f"mounting a small tmpfs failed (needs root): {done.stderr.strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(mount: Path) -> None:
    # unbuffered: a buffered file's last partial write would fail again when it is closed
    fd = os.open(mount / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 65536)
    except OSError:
        pass
    finally:
        os.close(fd)


def _steepy(*args: str, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "steepy.cli", *args], capture_output=True,
                          text=True, timeout=120, cwd=ROOT, env=env, **kw)


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(STEEPY_TMPPATH=str(tmp_path / "tmp"), STEEPY_OUTPATH=str(tmp_path / "out"),
               STEEPY_LOGS_PROCESSCHAINS_PATH=str(tmp_path / "logs"),
               STEEPY_CONTROLLER_LEASETIMEOUT="3s", STEEPY_CONTROLLER_HEARTBEATINTERVAL="300ms",
               STEEPY_SCHEDULER_LOOKUPINTERVAL="300ms")
    return env


COMMANDS = {
    "submit": ["submit", "workflows/linear.yaml", "--services", "services"],
    "run": ["run", "workflows/linear.yaml", "--services", "services"],
    "list": ["list"],
    "show": ["show", "SID"],
    "worker": ["worker", "--services", "services"],
}


@pytest.fixture(scope="module")
def submitted(tmp_path_factory) -> tuple[Path, str]:
    """A database holding one submission (`steepy submit`), made once for the module: each
    test of the commands copies it onto its own small disk (the same file the submit would
    have left there; it took a steepy process per test)."""
    place = tmp_path_factory.mktemp("submitted")
    db_file = place / "steepy.db"
    first = _steepy("submit", "workflows/linear.yaml", "--services", "services",
                    "--db", f"sqlite:///{db_file}", env=_env(place))
    assert first.returncode == 0, first.stderr
    assert not any(place.glob("steepy.db-*"))  # closed: the one file is the whole database
    return db_file, first.stdout.split()[-1]


@pytest.mark.parametrize("state", ["full", "read-only"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_commands_say_what_is_wrong(disk, tmp_path, submitted, command: str, state: str) -> None:
    db_file = disk / "steepy.db"
    db = f"sqlite:///{db_file}"
    env = _env(tmp_path)
    db_file.write_bytes(submitted[0].read_bytes())
    sid = submitted[1]
    before = db_file.read_bytes()
    if state == "full":
        _fill(disk)
    else:
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    args = [a.replace("SID", sid) for a in COMMANDS[command]]
    done = _steepy(*args, "--db", db, env=env)
    assert "Traceback" not in done.stderr
    # (reading too: SQLite must create the WAL's index file beside the database to read it)
    assert done.returncode == 4, (done.returncode, done.stdout, done.stderr)
    cause = "the disk is full" if state == "full" else "its file system is read-only"
    assert done.stderr.strip().splitlines()[-1].startswith(
        f"steepy: cannot use the database {db_file}: {cause}"), done.stderr
    assert db_file.read_bytes() == before or state == "full"  # nothing stored


def test_worker_waits_for_room_and_carries_on(disk, tmp_path) -> None:
    db_file = disk / "steepy.db"
    db = f"sqlite:///{db_file}"
    env = _env(tmp_path)
    wf = tmp_path / "naps.yaml"
    wf.write_text(FAN_OUT)
    submitted = _steepy("submit", str(wf), "--services", "services", "--db", db, env=env)
    assert submitted.returncode == 0, submitted.stderr
    sid = submitted.stdout.split()[-1]
    errors = open(tmp_path / "worker.err", "w+")
    worker = subprocess.Popen([sys.executable, "-m", "steepy.cli", "worker", "--agents", "2",
                               "--services", "services", "--db", db], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=errors)
    try:
        registry = open_registry(db)
        end = time.monotonic() + 60
        while not registry.views.chain_counts(sid).get("RUNNING"):
            assert time.monotonic() < end and worker.poll() is None, "nothing started"
            time.sleep(0.05)
        registry.engine.dispose()
        _fill(disk)
        end = time.monotonic() + 60
        while "the disk is full" not in (tmp_path / "worker.err").read_text():
            assert time.monotonic() < end, "the worker never said what happened"
            assert worker.poll() is None, (tmp_path / "worker.err").read_text()
            time.sleep(0.1)
        time.sleep(2)  # the naps end meanwhile: their outcomes wait in memory
        assert worker.poll() is None, "the worker gave up"
        (disk / "filler").unlink()
        registry = open_registry(db)
        end = time.monotonic() + 90
        while registry.views.get_submission(sid).status != SS.SUCCESS:
            assert time.monotonic() < end, registry.views.chain_counts(sid)
            assert worker.poll() is None, (tmp_path / "worker.err").read_text()
            time.sleep(0.1)
        for record in registry.views.list_chains(sid)[0]:
            assert [r.status for r in registry.views.runs(record.chain.id)] == ["SUCCESS"]
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(60) == 0
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
        errors.close()
    text = (tmp_path / "worker.err").read_text()
    assert "Traceback" not in text and "never retrieved" not in text, text


async def test_an_engine_whose_task_dies_stops_and_lets_go(tmp_path, monkeypatch) -> None:
    """A bug in finishing a chain (not a database failure) stops the engine: its agents are
    forgotten and its leases end, so another engine takes the work over at once."""
    monkeypatch.chdir(ROOT)
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    sid = _submit(registry, SLEEPY.replace("value: 30", "value: 0.2"))

    claim_only = registry.queue.record

    def broken(ends, claims, attempts=()):
        if ends:
            raise RuntimeError("a bug in recording the end of a run")
        return claim_only(ends, claims, attempts)

    monkeypatch.setattr(registry.queue, "record", broken)
    engine = Engine(registry, SERVICES, MACROS, _settings(tmp_path))
    await asyncio.wait_for(engine.run(), 60)
    assert isinstance(engine.failure, RuntimeError)
    assert registry.leases.live_agents(60) == []
    monkeypatch.undo()
    healthy = Engine(registry, SERVICES, MACROS, _settings(tmp_path))
    await asyncio.wait_for(healthy.run(until_submission=sid), 60)
    assert registry.views.get_submission(sid).status == SS.SUCCESS
