"""The executor process's attempts and the process tree below it: which process belongs to
which attempt (used by executor_process.py, and imported by it as a top-level module: it runs
with `python -I -S` and imports only the standard library).

The executor is every tool's parent and subreaper, so every process of every attempt is below
it, and it finds them by walking its own process tree (`/proc/<pid>/task/<tid>/children`).

Which process belongs to which attempt (needed when one attempt ends while others run):
- a tool (a child the executor spawned) and everything below it: the tool's attempt;
- a process re-parented to the executor (its parent died) and everything below it: the
  attempt whose session it is in. Each tool leads a session of its own, and a process can
  leave a session only for a new one of its own (`setsid`), so the session of such a process
  is a tool's (exact), or one seen earlier below a tool (learnt on every walk), or unknown:
  a daemon that called `setsid` and whose parents all exited before any walk saw them;
- such an unknown one belongs to every attempt that was open when it was started (its start
  time against the attempts' spans), and it is ended with the first of those that ends (when
  two attempts overlap, a daemon of one may be ended with the other: never an orphan, never a
  process that outlives its attempt; exactly one candidate in the usual case, and before a
  new attempt starts, re-parented processes that only one open attempt can have made are
  pinned to it). A process no attempt's span covers belongs to any attempt that ends.
"""

from __future__ import annotations

import os
import time

CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _ticks() -> int:
    """Now in the clock of /proc/<pid>/stat's start times (ticks since boot)."""
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * CLK_TCK)


def _stat(pid: int) -> tuple[str, int, int, int, int] | None:
    """(state, ppid, process group, session, start time in ticks) of a process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (fields[0].decode(), int(fields[1]), int(fields[2]), int(fields[3]), int(fields[19]))


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                out.extend(int(c) for c in f.read().split())
        except (OSError, ValueError):
            pass
    return out


def _children_by_scan() -> Callable[[int], list[int]]:
    """Without /proc/<pid>/task/<tid>/children (CONFIG_PROC_CHILDREN): by every process's
    parent, read once per walk."""
    parents: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = _stat(int(name))
            if st is not None:
                parents.setdefault(st[1], []).append(int(name))
    return lambda pid: parents.get(pid, [])


class _Run:
    """An attempt, seen from the executor."""

    def __init__(self, ident: bytes, chan: "_Chan", grace_ms: int) -> None:
        self.id = ident
        self.chan = chan
        self.grace_ms = grace_ms
        self.pid = 0
        self.proc = None
        # processes of this attempt start at or after `start` and, unless re-parented to the
        # executor and unknown, before `end` (both in /proc's start-time ticks since boot)
        self.start = _ticks()
        self.end: int | None = None
        self.reaped = False
        self.kill_at: float | None = None  # released, leftovers get SIGKILL then


def _own_children(me: int) -> Callable[[int], list[int]] | None:
    """How to read a process's children, with the executor's own (`me`, read often) read by
    one pread each time; None without /proc/<pid>/task/<tid>/children."""
    if not os.path.exists(f"/proc/{me}/task/{me}/children"):
        return None
    mine = os.open(f"/proc/{me}/task/{me}/children", os.O_RDONLY)

    def children(pid: int) -> list[int]:
        if pid != me:
            return _children(pid)
        data, chunk = b"", os.pread(mine, 65536, 0)
        while chunk:
            data += chunk
            chunk = os.pread(mine, 65536, len(data)) if len(chunk) == 65536 else b""
        return [int(c) for c in data.split()]
    return children


class _Tree:
    """The attempts of the executor (`_Executor` is one) and the processes below it."""

    def __init__(self) -> None:
        self.me = os.getpid()
        self.runs: dict[bytes, _Run] = {}  # open, or released with leftovers being ended
        self.by_pid: dict[int, _Run] = {}  # tools not reaped yet
        self.history: list[_Run] = []  # released attempts (for the spans of unknown orphans)
        self.sessions: dict[int, _Run] = {}  # session id -> attempt
        self.children = _own_children(self.me)

    def walk(self, only: "_Run | None" = None) -> dict[int, tuple[tuple, list[_Run]]]:
        """Processes below the executor (with `only`, those that may be its): pid -> (its
        stat, the attempts it may belong to; empty: any attempt)."""
        children = self.children or _children_by_scan()
        found: dict[int, tuple[tuple, list[_Run]]] = {}
        for top in children(self.me):
            run = self.by_pid.get(top)
            if run is not None and only is not None and run is not only:
                continue  # another attempt's tool: its tree is that attempt's
            st = _stat(top)
            if st is None:
                continue
            owners = [run] if run is not None else self.owners_of(st)
            if only is not None and owners and only not in owners:
                continue
            stack = [(top, st)]
            while stack:
                pid, st = stack.pop()
                if run is not None:  # below a tool: its session is the tool's attempt's now
                    self.sessions[st[3]] = run
                elif len(owners) == 1 and owners[0].id in self.runs:
                    self.sessions.setdefault(st[3], owners[0])
                found[pid] = (st, owners)
                for c in children(pid):
                    cst = _stat(c)
                    if cst is not None and c not in found:
                        stack.append((c, cst))
        return found

    def pin(self) -> None:
        """Before a new attempt opens: an adopted process of an unknown session that only
        one open attempt can have made is that attempt's (the new one cannot have made it,
        even when it starts within the same clock tick)."""
        if self.children is None:
            return
        for top in self.children(self.me):
            if top not in self.by_pid:
                st = _stat(top)
                if st is not None and st[3] not in self.sessions:
                    owners = self.owners_of(st)
                    if len(owners) == 1 and owners[0].end is None:
                        self.sessions[st[3]] = owners[0]

    def owners_of(self, st: tuple) -> list[_Run]:
        run = self.sessions.get(st[3])
        if run is not None and run.id in self.runs:
            return [run]
        started = st[4]
        return [r for r in list(self.runs.values()) + self.history
                if r.start <= started and (r.end is None or started <= r.end)]

    def members(self, run: _Run) -> tuple[list[int], int]:
        """Alive processes of `run` and how many of them are in its process group."""
        pids, in_group = [], 0
        for pid, (st, owners) in self.walk(run).items():
            if st[0] in ("Z", "X"):
                continue
            pids.append(pid)
            in_group += st[2] == run.pid
        return pids, in_group

    def signal_run(self, run: _Run, sig: int) -> tuple[int, int]:
        pids, in_group = self.members(run)
        if sig:
            if run.pid and (not run.reaped or in_group):  # the group id is still taken
                try:
                    os.killpg(run.pid, sig)
                except OSError:
                    pass
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
        return in_group, len(pids)
