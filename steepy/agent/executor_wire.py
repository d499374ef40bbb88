"""The executor's wire format, shared by the engine's side (steepy.agent.executor) and the
executor process (executor_process.py, which imports it as a top-level module: it runs with
`python -I -S` and imports only the standard library).

Protocol: frames of a 4-byte big-endian length and fields separated by NUL, over stream
sockets. A control socket (from the executor's start) carries only new channels (a socket
passed with SCM_RIGHTS), one per event loop of the engine process, so that each loop reads its
own replies. On a channel, the engine sends
  S id grace_ms cwd argc argv... env...   with the write end of the tool's output pipe attached
  K id signal      signal the attempt's group and every process of it (0: count only)
  R id grace_ms    the attempt is over: end whatever is left of it (TERM, grace, KILL)
and the executor answers
  p id pid         spawned (pid = process group = session)
  e id text        cannot run it (the message the agent reports)
  x id status clean  the tool exited: its exit code, or minus the signal that ended it; clean
                   1: nothing of the attempt was left then (the executor forgot it, no R)
  k id group all   alive processes of the attempt in its process group, and in all, before
                   the signal was sent
"""

from __future__ import annotations

import os
import struct

HEADER = struct.Struct("!I")
MAX_FDS = 16


def _frame(*fields: bytes) -> bytes:
    payload = b"\0".join(fields)
    return HEADER.pack(len(payload)) + payload


def _frames(buf: bytearray) -> list[list[bytes]]:
    """Complete frames taken off the front of `buf`."""
    out = []
    while len(buf) >= 4:
        (size,) = HEADER.unpack_from(buf)
        if len(buf) < 4 + size:
            break
        out.append(bytes(buf[4:4 + size]).split(b"\0"))
        del buf[:4 + size]
    return out


def _enc(text: str) -> bytes:
    return os.fsencode(text)
