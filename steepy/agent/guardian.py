"""Tools never outlive the process that started them.

Every tool runs in a session of its own (so a signal to its agent's process group does not
reach it), which also means nothing ends it when its agent dies. A guardian does: one small
process per agent process, in a session of its own too, that learns of every attempt over a
pipe. Before a tool is spawned the agent sends its tree token (the `STEEPY_TREE_TOKEN` every
process of the attempt inherits), after the spawn its process group, after the attempt that it
is over. When the pipe closes while attempts are open, the agent died (`kill -9` of its pid or
of its whole group): the guardian sends SIGTERM to each open attempt's group and to every
process carrying one of the open tokens, waits the kill grace period, sends SIGKILL to what
is left, and exits. An agent that exits normally has no open attempts, so nothing is touched.

Run as a script (`python guardian.py`), it imports only the standard library until it has to
look for processes, so it starts in a few milliseconds.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

_instance: "Guardian | None" = None
_instance_lock = threading.Lock()


class Guardian:
    """The agent's side: a pipe to the guardian process, restarted if that process died."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._open: dict[str, str] = {}  # token -> its latest line, sent again after a restart

    def _send(self, token: str, line: str | None) -> None:
        with self._lock:
            if line is None:
                self._open.pop(token, None)
                line = f"- {token}\n"
            else:
                self._open[token] = line
            for _ in range(2):
                if self._proc is None or self._proc.poll() is not None:
                    self._start()
                try:
                    os.write(self._proc.stdin.fileno(), line.encode())
                    return
                except OSError:  # it died: start another and tell it what is open
                    self._proc = None

    def _start(self) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__)], stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            close_fds=True)
        if self._open:
            os.write(self._proc.stdin.fileno(), "".join(self._open.values()).encode())

    @property
    def pid(self) -> int | None:
        """The guardian process (None before the first attempt)."""
        return None if self._proc is None else self._proc.pid

    def watch(self, token: str, grace_ms: int) -> None:
        """An attempt with this tree token is about to start."""
        self._send(token, f"+ {token} {max(int(grace_ms), 0)}\n")

    def started(self, token: str, pgid: int, grace_ms: int) -> None:
        """Its tool runs, leading process group `pgid`."""
        self._send(token, f"+ {token} {max(int(grace_ms), 0)} {pgid}\n")

    def release(self, token: str) -> None:
        """The attempt is over and its processes are gone."""
        self._send(token, None)


def guardian() -> Guardian:
    """This process's guardian (started with the first attempt)."""
    global _instance
    with _instance_lock:
        if _instance is None:
            _instance = Guardian()
        return _instance


# -- the guardian process ------------------------------------------------------------------------


def _carrying(tokens: set[str]) -> list[int]:
    """Pids of processes whose environment holds one of the tree tokens."""
    from steepy.agent.leftovers import pids_with_env

    return pids_with_env("STEEPY_TREE_TOKEN", tokens)


def _signal(pgids: set[int], pids: list[int], sig: int) -> None:
    for pgid in pgids:
        try:
            os.killpg(pgid, sig)
        except OSError:
            pass
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            pass


QUIET_SCANS = 4  # scans 50 ms apart that must find nothing before the guardian believes it


def _end_everything(open_attempts: dict[str, tuple[int, int | None]]) -> None:
    """SIGTERM, the grace period, SIGKILL. A process in the middle of `execve` shows an empty
    environment for a moment (a tool started through a chain of execs, such as pyenv's
    `python3` shim, has several such moments), so one scan that finds nothing proves
    nothing: every scan signals what it finds, and only QUIET_SCANS empty ones in a row end
    the watch. Each process and group gets each signal once (a second SIGTERM would cut
    short the clean-up a tool may do on the first)."""
    tokens = set(open_attempts)
    pgids = {pgid for _, pgid in open_attempts.values() if pgid is not None}
    grace_s = max(grace for grace, _ in open_attempts.values()) / 1000
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 2.0)):
        end = time.monotonic() + wait_s
        quiet = 0
        told_pids: set[int] = set()
        told_groups: set[int] = set()
        while quiet < QUIET_SCANS and time.monotonic() < end:
            found = set(_carrying(tokens))
            groups = {g for g in pgids if _group_alive(g)}
            _signal(groups - told_groups, sorted(found - told_pids), sig)
            told_pids |= found
            told_groups |= groups
            quiet = 0 if found or groups else quiet + 1
            time.sleep(0.05)
        if quiet >= QUIET_SCANS:
            return


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except OSError:
        return False


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the agent, which cleans up
    open_attempts: dict[str, tuple[int, int | None]] = {}  # token -> (grace ms, pgid)
    for line in sys.stdin.buffer:
        parts = line.decode("ascii", "replace").split()
        if len(parts) >= 3 and parts[0] == "+":
            open_attempts[parts[1]] = (int(parts[2]), int(parts[3]) if len(parts) > 3 else None)
        elif len(parts) == 2 and parts[0] == "-":
            open_attempts.pop(parts[1], None)
    if open_attempts:  # the agent is gone with attempts still open
        _end_everything(open_attempts)


if __name__ == "__main__":
    # run as a script: import steepy from where this file lies, not from its own folder
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    main()
