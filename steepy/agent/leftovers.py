"""Finding and ending processes an attempt left behind, by the environment they inherited.

Every process a tool starts inherits its environment, also when it leaves the tool's process
group or its parent exits. So `STEEPY_TREE_TOKEN` finds all processes of one attempt, and
`STEEPY_PROCESS_CHAIN_ID` with `STEEPY_RUN_NUMBER` all processes of one run of a chain.
"""

from __future__ import annotations

import os
import signal
import time
from typing import Iterable

import psutil


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
    """End every process of run `run_number` of chain `chain_id` on this machine: SIGTERM,
    up to `grace_s` to go, then SIGKILL. Returns how many there were."""
    def find() -> list[int]:
        return pids_with_env("STEEPY_PROCESS_CHAIN_ID", [chain_id],
                             {"STEEPY_RUN_NUMBER": str(run_number)})

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
