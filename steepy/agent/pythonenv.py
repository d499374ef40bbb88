"""Python environments of services (`python:' of a service), built once with uv and kept.

Each environment is a directory `<environments.path>/<sha256>' named by the hash of what was
asked (requirements, version, machine type). The first attempt that needs one builds it: it
takes an exclusive lock on `<sha256>.lock' (fcntl; on a shared file system also against
agents on other machines), builds in a temporary directory beside it (`uv venv' and
`uv pip install') and renames that into place, which is atomic. Whoever waited on the lock
then finds the directory and uses it. An attempt that is cancelled mid-build leaves a
temporary directory, which the next builder of the same environment removes.
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import platform
import shutil
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from steepy.agent.preparing import last_lines, run_preparing
from steepy.errors import SteepyError
from steepy.model.software import PythonEnvironment

__all__ = ["BuildFailed", "python_environment", "uv_binary"]

log = logging.getLogger(__name__)
LOCK_POLL_S = 0.2

# environments being built by this process: a second attempt waits here (fcntl locks do not
# exclude coroutines of one process from each other on every file system)
_building: dict[tuple[int, str], asyncio.Lock] = {}


class BuildFailed(SteepyError):
    """uv could not build an environment; the message has uv's last lines."""


def uv_binary() -> str:
    """The uv program of the `uv' package steepy depends on."""
    import uv
    return uv.find_uv_bin()


async def python_environment(spec: PythonEnvironment, root: Path,
                             env: Mapping[str, str]) -> Path:
    """The directory of the environment `spec' below `root', built first if it is not there
    (uv runs with `env', so UV_INDEX_URL, UV_OFFLINE, proxies and so on apply). BuildFailed
    when uv fails."""
    digest = spec.digest(platform.machine())
    target = root / digest
    if target.is_dir():
        return target
    key = (id(asyncio.get_running_loop()), digest)
    lock = _building.setdefault(key, asyncio.Lock())
    async with lock:
        root.mkdir(parents=True, exist_ok=True)
        fd = os.open(root / f"{digest}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            await _locked(fd)
            if not target.is_dir():  # (built by whoever held the lock before)
                await _build(spec, root, digest, env)
        finally:
            os.close(fd)  # (releases the lock)
    return target


async def _locked(fd: int) -> None:
    """Take the exclusive lock of `fd', waiting without blocking the loop."""
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            await asyncio.sleep(LOCK_POLL_S)


async def _build(spec: PythonEnvironment, root: Path, digest: str,
                 env: Mapping[str, str]) -> None:
    for leftover in root.glob(f".{digest}-*"):  # a build that was cut short (we hold the lock)
        shutil.rmtree(leftover, ignore_errors=True)
    started = time.monotonic()
    building = Path(tempfile.mkdtemp(prefix=f".{digest}-", dir=root))
    try:
        uv = uv_binary()
        venv = [uv, "venv", "--quiet", "--relocatable", str(building)]
        if spec.version is not None:
            venv[2:2] = ["--python", spec.version]
        await _run(venv, env)
        if spec.requirements:
            await _run([uv, "pip", "install", "--python", str(building / "bin" / "python"),
                        *spec.requirements], env)
        os.rename(building, root / digest)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    log.info("built Python environment %s (%s) in %.1f s", root / digest,
             ", ".join(spec.requirements) or "no requirements", time.monotonic() - started)


async def _run(argv: list[str], env: Mapping[str, str]) -> None:
    code, out, _ = await run_preparing(argv, {**env, "NO_COLOR": "1"}, merge_stderr=True)
    if code != 0:
        raise BuildFailed(last_lines(out) or f"uv exited with {code}")
