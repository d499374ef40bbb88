"""Lost runs of this machine: a run whose engine died is registered again only once nothing
of it is left here, so a chain never runs beside a copy of itself. The dead engine's executor
ends every tool it ran and then exits; it is waited for (a bounded while per recovery round,
remembered across rounds), and should it have been killed too, the attempts' process groups
are ended instead."""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from typing import Callable

from steepy.agent.executor import identity
from steepy.agent.leftovers import (SAME_START_S, end_groups, end_run_leftovers, is_running,
                                    orphaned_executors)
from steepy.model.attempt import RUNNING
from steepy.registry.interfaces import Leases
from steepy.registry.offload import call


class LostRuns:
    """What dead engines left, looked for once per heartbeat (`round')."""

    def __init__(self, log: logging.Logger):
        self._log = log
        # executors of lost engines waited for, per lost run (kept: the lost agent's row, which
        # names its engine's pid, is forgotten after a while), and those said in the log
        self._waited_for: dict[tuple[str, int], set] = {}
        self._logged: set = set()
        self._held_elsewhere: set[tuple[str, int]] = set()  # runs of other machines said held

    async def round(self, leases: Leases, owner: str, rows: list[dict] | None, lease_s: float,
                    flag: bool, grace_s: float, judging: bool = True,
                    on_beat: Callable[[], None] | None = None) -> list[str]:
        """Release chains of dead agents; runs of this machine only once none of their
        processes is left (`ended_here`). With `rows`, this engine's heartbeat first; with
        `flag`, chains no live agent can run are marked. What finds nothing is one thread
        call and one transaction (`Leases.beat`). Returns the chains registered again.
        Not `judging` (right after this engine's own outage, fencing.py): none. `on_beat`
        is called as soon as the heartbeat has committed."""
        agents, lost, waiting = await call(leases.beat, owner, rows, lease_s, flag)
        if on_beat is not None:
            on_beat()
        lost = lost if judging else []
        for sid, reason, count in waiting:  # chains wait for an agent nobody runs
            self._log.warning("submission %s: %d process chain(s) %s", sid, count, reason)
        live = [a["id"] for a in agents]
        # waits for executors are bounded per round (the heartbeat waits meanwhile)
        end = asyncio.get_running_loop().time() + min(grace_s + 2.0, lease_s / 4)
        found: dict[int, list] = {}  # dead engine's pid -> its executors (one look per round)
        held = [run["agentId"] for run in lost
                if self.may_still_run_elsewhere(run, lease_s, grace_s)
                or not await self.ended_here(run, grace_s, end, found)]
        # no lost run: nothing to release (one lost after the look is released next round)
        released = await call(leases.release_orphans, live + held, lease_s) if lost else []
        if released:
            self._log.warning("process chains of lost agents registered again: %s",
                              ", ".join(released))
        return released

    def may_still_run_elsewhere(self, run: dict, lease_s: float, grace_s: float) -> bool:
        """Whether a run of another machine may still have its tool running there: its
        engine, alive but unable to write its heartbeat, stops its tools as its lease ends
        (fencing.py), giving them the kill grace period to end. Until its agent has been
        silent that long (and 2 s for clocks that differ), the run is held back."""
        if run["host"] in (socket.gethostname(), None) or run.get("lastSeen") is None:
            return False
        silent_s = time.time() - run["lastSeen"]
        if silent_s >= lease_s + grace_s + 2.0:
            return False
        key = (run["chainId"], run["runNumber"])
        if key not in self._held_elsewhere:
            self._held_elsewhere.add(key)
            self._log.warning("run %d of process chain %s on %s is held back until its tools "
                              "there have surely stopped", run["runNumber"], run["chainId"],
                              run["host"])
        return True

    async def ended_here(self, run: dict, grace_s: float, end: float,
                          found: dict[int, list]) -> bool:
        """Whether nothing of a lost run is left on this machine: the dead engine's executor
        (recorded with the run's attempts, or found by its command line) has ended (it ends
        every tool it ran, then exits; waited for until `end`, the run is held back until
        then), and the attempts' process groups, and what left them (found by the run in their
        environment), are ended should it have been killed too."""
        host = socket.gethostname()
        here = [a for a in run["attempts"] if a["host"] == host]
        executors = {(a["executorPid"], a["executorStarted"]) for a in here
                     if a["executorPid"] is not None}
        if run["host"] == host and run.get("enginePid"):
            if run["enginePid"] not in found:
                found[run["enginePid"]] = await call(orphaned_executors, run["enginePid"])
            executors |= set(found[run["enginePid"]])
        key = (run["chainId"], run["runNumber"])
        executors |= self._waited_for.pop(key, set())
        # this process's own executor serves its engines that live: it never ends for one of
        # them that stopped (an engine of the Python API), whose tools, if any are left, are
        # ended below by their process groups like those of a killed executor
        executors = {e for e in executors if not own_executor(*e)}
        alive = await self._until_gone(executors, end)
        if alive:
            self._waited_for[key] = alive
            for pid, _ in sorted(alive - self._logged):
                self._log.warning("run %d of process chain %s waits for executor process %d of a "
                            "lost engine to end its tools", run["runNumber"], run["chainId"], pid)
            self._logged |= alive
            return False
        groups = [(a["pgid"], a["startTime"]) for a in here
                  if a["pgid"] and a["outcome"] in (None, RUNNING)]
        ended = 0
        if groups:  # its executor was killed too: the tools' groups may be left
            ended = await call(end_groups, groups, grace_s)
        if (groups or not executors) and run["host"] in (host, None):
            # by their environment: what left its group (`setsid'), and attempts of old
            ended += await call(end_run_leftovers, run["chainId"], run["runNumber"], grace_s)
        if ended:
            self._log.warning("ended %d leftover process(es) of run %d of process chain %s",
                        ended, run["runNumber"], run["chainId"])
        return True

    @staticmethod
    async def _until_gone(executors: set, end: float) -> set:
        """The executors (pid, start time) still running at `end` at the latest."""
        clock = asyncio.get_running_loop().time
        alive = {e for e in executors if is_running(*e)}
        while alive and clock() < end:
            await asyncio.sleep(0.05)
            alive = {e for e in alive if is_running(*e)}
        return alive


def own_executor(pid: int, started: float | None) -> bool:
    """Whether (pid, start time) is this process's current executor."""
    own = identity()
    return (own is not None and pid == own[0]
            and (started is None or abs(started - own[1]) <= SAME_START_S))
