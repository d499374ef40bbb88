"""The process tree of one attempt: finding its members (also those that left its group,
by the attempt's `STEEPY_TREE_TOKEN`) and ending them (extensions sections 7 and 8)."""

from __future__ import annotations

import asyncio
import os
import time

import psutil

TOKEN_VAR = "STEEPY_TREE_TOKEN"
POLL_S = 0.01


def is_alive(p: psutil.Process) -> bool:
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def pgid(p: psutil.Process) -> int | None:
    try:
        return os.getpgid(p.pid)
    except OSError:
        return None


def tree_of(pid: int, token: str, since: float) -> list[psutil.Process]:
    """Descendants of `pid` and every process carrying `token`, alive now."""
    found: dict[int, psutil.Process] = {}
    try:
        for child in psutil.Process(pid).children(recursive=True):
            found[child.pid] = child
    except psutil.Error:
        pass
    for p in psutil.process_iter(["create_time"]):
        created = p.info.get("create_time")
        if p.pid in found or p.pid == pid or created is None or created < since - 1:
            continue
        try:
            if p.environ().get(TOKEN_VAR) == token:
                found[p.pid] = p
        except psutil.Error:
            continue
    return [p for p in found.values() if is_alive(p)]


def group_exists(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def kill_all(processes: list[psutil.Process]) -> None:
    for p in processes:
        try:
            p.kill()
        except psutil.Error:
            pass


async def kill_and_wait(processes: list[psutil.Process], timeout_s: float = 1.0) -> None:
    """SIGKILL and wait until the kernel has ended them (delivery is not instantaneous)."""
    alive = [p for p in processes if is_alive(p)]
    kill_all(alive)
    end = time.monotonic() + timeout_s
    while alive and time.monotonic() < end:
        await asyncio.sleep(POLL_S / 5)
        alive = [p for p in alive if is_alive(p)]


