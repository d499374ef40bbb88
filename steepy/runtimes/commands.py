"""What runtimes share: an executable's arguments as command-line words, and running a
helper command (e.g. `docker kill`, `squeue`) quietly."""

from __future__ import annotations

import os
import signal
import subprocess

from steepy.model.processchain import DATA_TYPE_BOOLEAN, Argument

__all__ = ["argument_list", "read_quietly", "run_quietly"]


def argument_list(arguments: list[Argument]) -> list[str]:
    """Booleans give their label only when true (never the value); others label, then value."""
    out: list[str] = []
    for a in arguments:
        if a.data_type == DATA_TYPE_BOOLEAN:
            if a.variable.value.strip().lower() == "true" and a.label:
                out.append(a.label)
            continue
        if a.label:
            out.append(a.label)
        out.append(a.variable.value)
    return out


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def run_quietly(argv: list[str], env: dict[str, str], timeout_s: float) -> int | None:
    """Run a helper command with its output discarded; its exit code (None: it could not
    start or did not end within `timeout_s`)."""
    ran = await _helper(argv, env, timeout_s, subprocess.DEVNULL)
    return None if ran is None else ran[0]


async def read_quietly(argv: list[str], env: dict[str, str], timeout_s: float) -> str | None:
    """What a helper command (e.g. `squeue`) printed, if it ended well within `timeout_s`."""
    ran = await _helper(argv, env, timeout_s, subprocess.PIPE)
    return ran[1].decode(errors="replace") if ran is not None and ran[0] == 0 else None


async def _helper(argv: list[str], env: dict[str, str], timeout_s: float,
                  stdout: int) -> tuple[int, bytes] | None:
    import asyncio  # here: `steepy validate' loads the runtimes, and runs none (issue 31)

    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, stdin=subprocess.DEVNULL, stdout=stdout,
            stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    except (OSError, ValueError):
        return None
    try:
        async with asyncio.timeout(timeout_s):  # (wait_for may swallow a cancellation)
            out, _ = await proc.communicate()
            return proc.returncode, out or b""
    except TimeoutError:
        _kill_group(proc.pid)
        await proc.wait()
        return None
    except asyncio.CancelledError:
        _kill_group(proc.pid)
        raise
