"""Lost runs of this machine: a run whose engine died is registered again only once nothing
of it is left here, so a chain never runs beside a copy of itself. The dead engine's executor
ends every tool it ran and then exits; it is waited for (a bounded while per recovery round,
remembered across rounds), and should it have been killed too, the attempts' process groups
are ended instead."""

from __future__ import annotations

import asyncio
import logging
import socket

from steepy.agent.leftovers import end_groups, end_run_leftovers, is_running, orphaned_executors
from steepy.model.attempt import RUNNING
from steepy.registry.offload import call


class LostRuns:
    def __init__(self, log: logging.Logger):
        self._log = log
        # executors of lost engines waited for, per lost run (kept: the lost agent's row, which
        # names its engine's pid, is forgotten after a while), and those said in the log
        self._waited_for: dict[tuple[str, int], set] = {}
        self._logged: set = set()

    async def ended_here(self, run: dict, grace_s: float, end: float,
                          found: dict[int, list]) -> bool:
        """Whether nothing of a lost run is left on this machine: the dead engine's executor
        (recorded with the run's attempts, or found by its command line) has ended (it ends
        every tool it ran, then exits; waited for until `end`, the run is held back until
        then), and the attempts' process groups are ended should it have been killed too."""
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
        if groups:  # its executor was killed too: the tools' groups may be left
            ended = await call(end_groups, groups, grace_s)
        elif not executors and run["host"] in (host, None):  # attempts of old: by environment
            ended = await call(end_run_leftovers, run["chainId"], run["runNumber"], grace_s)
        else:
            ended = 0
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

