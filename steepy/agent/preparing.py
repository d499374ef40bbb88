"""A short command that prepares an attempt (building a Python environment with uv, loading
HPC modules with Lmod): run in a session of its own, killed at once if the attempt is
cancelled meanwhile, and on failure reduced to its last lines for the attempt's message."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Mapping

LINES_KEPT = 12  # of a failed command's output, for the error message


async def run_preparing(argv: list[str], env: Mapping[str, str],
                        merge_stderr: bool = False) -> tuple[int, bytes, bytes]:
    """(exit code, stdout, stderr) of `argv` (stderr into stdout with `merge_stderr`).
    OSError if it cannot start."""
    proc = await asyncio.create_subprocess_exec(
        *argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE, env=dict(env),
        start_new_session=True)
    try:
        out, err = await proc.communicate()
    except asyncio.CancelledError:
        proc.kill()
        await proc.wait()
        raise
    return proc.returncode or 0, out or b"", err or b""


def last_lines(output: bytes) -> str:
    """The last LINES_KEPT lines of `output` that are not blank."""
    lines = [line for line in output.decode(errors="replace").splitlines() if line.strip()]
    return "\n".join(lines[-LINES_KEPT:])
