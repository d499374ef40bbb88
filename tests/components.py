"""Real components a test needs (a single-node SLURM, dockerd, Chromium), installed and started
by the project's own scripts `.ci/<name> start`, and stopped when the last test session that
uses them ends.

    info = component("slurm")      # {"SLURM_CONF": "...", "partition": "debug", ...}
    env = {**os.environ, **environment(info)}

Each script prints `NAME=value` lines on stdout: upper-case names are environment variables a
client must set, lower-case ones are facts (partition, image, executable). When a component
cannot be had (not root, no apt-get, the daemon does not start) the calling test is skipped
with the script's one-line reason, except under CI=true, where that is a failure.

Several test sessions may share one machine (and so one cluster or daemon): each session
registers itself in /tmp/steepy-components-<uid>/<name>.users/<pid>, and the session that
leaves last stops the component, if a test session had started it. One that was already
running when no session used it (started by hand, to debug) is left running.
"""

from __future__ import annotations

import atexit
import fcntl
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CI_DIR = ROOT / ".ci"
STATE_DIR = Path(f"/tmp/steepy-components-{os.getuid()}")
START_TIMEOUT_S = 900.0  # a cold install may wait up to 600 s for another apt's lock
STOP_TIMEOUT_S = 120.0

_started: dict[str, dict[str, str]] = {}  # name -> what start printed, in this process
_failed: dict[str, str] = {}  # name -> the one-line reason, so a second test fails fast


def required() -> bool:
    """Under CI a missing component is a failure, not a skip."""
    return os.environ.get("CI", "").lower() == "true"


def parse(stdout: str) -> dict[str, str]:
    """The `NAME=value` lines a `.ci/<name> start` printed; other lines are ignored."""
    info: dict[str, str] = {}
    for line in stdout.splitlines():
        name, sep, value = line.strip().partition("=")
        if sep and name and " " not in name:
            info[name] = value
    return info


def environment(info: dict[str, str]) -> dict[str, str]:
    """The environment variables among a component's lines (the upper-case names)."""
    return {k: v for k, v in info.items() if k.isupper()}


def _reason(name: str, result: subprocess.CompletedProcess[str]) -> str:
    lines = [ln.strip() for ln in result.stderr.splitlines() if ln.strip()]
    last = lines[-1] if lines else f"exit code {result.returncode}"
    if "not available" in last:
        return last
    return f"{name} not available: .ci/{name} start: {last}"


def unavailable(reason: str) -> None:
    """Skip the calling test with `reason` (one line); under CI=true fail it instead."""
    if required():
        pytest.fail(f"{reason} (CI=true, so this is a failure)", pytrace=False)
    pytest.skip(reason)


@contextmanager
def _locked(name: str) -> Iterator[Path]:
    """The users folder of a component, under a lock shared by every session on the machine."""
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    users = STATE_DIR / f"{name}.users"
    users.mkdir(exist_ok=True)
    with open(STATE_DIR / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield users
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _other_users(users: Path) -> list[int]:
    live = []
    for entry in users.iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        if pid == os.getpid():
            continue
        if _alive(pid):
            live.append(pid)
        else:
            entry.unlink(missing_ok=True)  # a session that died without leaving
    return live


def _run(name: str, verb: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CI_DIR / name), verb], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def component(name: str) -> dict[str, str]:
    """Start component `name` (once per process) with `.ci/<name> start` and return what it
    printed; skip the calling test with one line when it cannot be had (fail under CI=true).
    It is stopped at the end of the last session using it (see `stop_started`)."""
    if name in _started:
        return _started[name]
    if name in _failed:
        unavailable(_failed[name])
    if not (CI_DIR / name).is_file():
        raise ValueError(f"no component script .ci/{name}")
    with _locked(name) as users:
        was_up = _run(name, "status", 60).returncode == 0
        try:
            result = _run(name, "start", START_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            result = subprocess.CompletedProcess([name], 1, "", f"timed out after {START_TIMEOUT_S:.0f} s")
        if result.returncode != 0:
            _failed[name] = _reason(name, result)
        else:
            if not was_up:
                (users / "started-by-tests").touch()
            (users / str(os.getpid())).touch()
            if not _started:
                atexit.register(stop_started)
            _started[name] = parse(result.stdout)
    if name in _failed:
        unavailable(_failed[name])
    return _started[name]


def stop_started() -> None:
    """Leave every component this process started: stop it when no other live session uses
    it and a test session started it. Runs at interpreter exit; call it at session end."""
    for name in list(_started):
        with _locked(name) as users:
            (users / str(os.getpid())).unlink(missing_ok=True)
            marker = users / "started-by-tests"
            if not _other_users(users) and marker.exists():
                try:
                    _run(name, "stop", STOP_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    pass
                marker.unlink(missing_ok=True)
        del _started[name]
