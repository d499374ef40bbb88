"""What a dead engine may have left running on this machine, for the engine that takes its
runs over (Engine._recover), which must not register a chain again while a process of its
lost run is still running.

Every tool is spawned by its engine's executor (steepy.agent.executor), which ends all of
them when its engine dies and exits only once none of its descendants is left. So the first
thing to wait for is the dead engine's executor: the one recorded with the run's attempts (pid
and start time), or one found by its command line (`executor_process.py FD ENGINE_PID`, or
`executor.py`, its name before; its parent no longer that engine). Should the executor itself
have been killed, the attempts' recorded process groups are ended. Runs recorded before
executors were (no executor on their attempts) are ended by the environment their processes
inherited: `STEEPY_PROCESS_CHAIN_ID` with `STEEPY_RUN_NUMBER` (a process inside `execve` shows
an empty environment for a moment, so that is only a fallback).
"""

from __future__ import annotations

import os
import signal
import time
from typing import Iterable

import psutil

from steepy.agent.executor import SCRIPT

SAME_START_S = 0.05  # start times read twice by psutil differ by less
# how much later than its attempt's recorded start a tool can have started (the spawn on a
# loaded machine); a leader of its group that started later is another process, given the
# group's id again (that needs tens of thousands of new processes in between)
SPAWN_SLACK_S = 10.0
# the executor's script, and its name in earlier versions
SCRIPTS = (os.path.basename(SCRIPT), "executor.py")


def is_running(pid: int, started: float | None) -> bool:
    """Whether process `pid` still runs and is the one that started at `started` (seconds
    since the epoch; None: any)."""
    try:
        p = psutil.Process(pid)
        if started is not None and abs(p.create_time() - started) > SAME_START_S:
            return False
        return p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def orphaned_executors(engine_pid: int) -> list[tuple[int, float]]:
    """(pid, start time) of executors of the engine process `engine_pid` that outlived it
    (their parent is no longer that process)."""
    found = []
    for p in psutil.process_iter(["cmdline", "ppid", "create_time"]):
        cmdline = p.info["cmdline"] or []
        if (len(cmdline) >= 3 and cmdline[-1] == str(engine_pid)
                and os.path.basename(cmdline[-3]) in SCRIPTS
                and os.path.basename(os.path.dirname(cmdline[-3])) == "agent"
                and p.info["ppid"] != engine_pid and p.info["create_time"] is not None):
            found.append((p.pid, p.info["create_time"]))
    return found


def end_groups(groups: Iterable[tuple[int, float | None]], grace_s: float) -> int:
    """End the members of these process groups (pgid, start time of the attempt that made
    it: only processes started since then) that are still alive: SIGTERM, up to `grace_s`,
    SIGKILL. Returns how many there were.

    A group id is the pid of the tool that led it, and Linux gives that pid to a new process
    only once no process is left in the group: a group whose leader is alive but started
    well after the attempt is somebody else's (the group ended, its id was given again: on a
    busy machine pids come round within minutes), and is left alone."""
    wanted = {pgid: since for pgid, since in groups
              if pgid and not _taken_again(pgid, since)}
    if not wanted:
        return 0

    def find() -> list[int]:
        pids = []
        for p in psutil.process_iter(["create_time", "status"]):
            try:
                g = os.getpgid(p.pid)
            except OSError:
                continue
            since = wanted.get(g, False)
            if since is False or p.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            if since is None or (p.info["create_time"] or 0) >= since - 1:
                pids.append(p.pid)
        return pids

    return _end(find, grace_s)


def _taken_again(pgid: int, since: float | None) -> bool:
    """Whether group `pgid` of an attempt that started at `since` has a leader that started
    later than the attempt's tool can have (its id was given to another process)."""
    if since is None:
        return False
    try:
        leader = psutil.Process(pgid)
        return (leader.create_time() > since + SPAWN_SLACK_S
                and leader.status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:  # no leader: what is left in the group is the attempt's
        return False


def _end(find, grace_s: float) -> int:
    pids = find()
    if not pids:
        return 0
    sig = signal.SIGTERM
    end = time.monotonic() + grace_s
    while True:
        for pid in find():
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        time.sleep(0.05)
        if not find():
            return len(pids)
        if time.monotonic() >= end:
            if sig == signal.SIGKILL:
                return len(pids)
            sig, end = signal.SIGKILL, time.monotonic() + 2.0


def pids_with_env(name: str, values: Iterable[str], also: dict[str, str] | None = None) -> list[int]:
    """Pids of the live processes (not this one) whose variable `name` is one of `values` and
    whose variables `also` have those values."""
    wanted = set(values)
    found = []
    me = os.getpid()
    for p in psutil.process_iter():
        if p.pid == me:
            continue
        try:
            env = p.environ()
            if env.get(name) in wanted and all(env.get(k) == v for k, v in (also or {}).items()) \
                    and p.status() != psutil.STATUS_ZOMBIE:
                found.append(p.pid)
        except psutil.Error:  # gone meanwhile, or not ours to read
            continue
    return found


def end_run_leftovers(chain_id: str, run_number: int, grace_s: float) -> int:
    """End every process of run `run_number` of chain `chain_id` on this machine, found by
    its environment: SIGTERM, up to `grace_s` to go, then SIGKILL. Returns how many there
    were. (Only for runs whose attempts name no executor.)"""
    return _end(lambda: pids_with_env("STEEPY_PROCESS_CHAIN_ID", [chain_id],
                                      {"STEEPY_RUN_NUMBER": str(run_number)}), grace_s)
