"""An engine's leases, seen from the engine: when its heartbeat last committed, and what
follows when heartbeats cannot be written.

Another engine takes this one's chains over once its agents have been silent for a lease
(`lease_s`): it counts their runs lost and runs the chains again. Two rules keep a tool from
running twice at once when the database cannot be reached for a while:

- **Tools stop before the lease ends.** An engine whose heartbeat has not committed for
  `lease_s - heartbeat_s` stops the tools its agents run and gives their chains back (and
  so again for any it starts until a heartbeat commits): another engine that can reach the
  database may count them lost soon. Only where engines on other machines may share the database (PostgreSQL):
  on one machine a lost run is registered again only once nothing of it is left
  (lostruns.py).
- **No judging right after an outage.** An engine whose own heartbeats failed counts no
  other engine's agents lost until its heartbeats have committed again for a whole lease
  (`judging`): when the database was down for everyone, every engine's heartbeat is old,
  and the others need a heartbeat's time to say they are alive.

Times are monotonic seconds (the event loop's `time()`), given by the caller; `last_ok` is
when the heartbeat's transaction had committed.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Callable

log = logging.getLogger(__name__)


class LeaseKeeper:
    def __init__(self, lease_s: float, heartbeat_s: float, fences_tools: bool, now: float):
        self.lease_s, self.heartbeat_s, self.fences_tools = lease_s, heartbeat_s, fences_tools
        self.last_ok = now  # when the heartbeat last committed (or the engine started)
        self._ok_since: float | None = None  # heartbeats committed in a row since (None: all)
        self._failing = False  # `beat_now`: the last beat failed (said once)

    def beat_ok(self, now: float) -> None:
        self.last_ok = now
        if self._ok_since is not None and now - self._ok_since >= self.lease_s:
            self._ok_since = None

    def beat_failed(self, now: float) -> None:
        self._ok_since = now  # judging again a lease after heartbeats commit again

    def judging(self, now: float) -> bool:
        """Whether this engine may count other engines' agents lost now."""
        return self._ok_since is None or now - self._ok_since >= self.lease_s

    def lapsing(self, now: float) -> bool:
        """Whether its tools must stop now: see the module's docstring."""
        # (a lease of less than two heartbeats leaves no room: half a heartbeat's delay)
        return (self.fences_tools and now - self.last_ok
                >= max(self.lease_s - self.heartbeat_s, 1.5 * self.heartbeat_s))

    async def watch(self, stop: asyncio.Event, fence: Callable[[float], None]) -> None:
        """Until `stop`: every half heartbeat interval, `fence(seconds since the last
        heartbeat)` while the lease is lapsing. A task of its own: a database call that hangs
        (a server gone without a word) must not hold it up."""
        loop = asyncio.get_running_loop()
        while not stop.is_set():
            try:
                await asyncio.wait_for(stop.wait(), self.heartbeat_s / 2)
            except asyncio.TimeoutError:
                pass
            now = loop.time()
            if not stop.is_set() and self.lapsing(now):
                fence(now - self.last_ok)

    async def keep_beating(self, beat: Callable[[], Callable[[], object]],
                           stop: asyncio.Event) -> None:
        """Until `stop`: every heartbeat interval, `beat()` (in the event loop: the heartbeat's
        transaction, run in a thread of its own), its commit or failure noted; the beat under
        way when `stop` is set ends before this does (it would write the agents back after
        the engine forgot them). A task and a thread of their own on PostgreSQL: a long write
        of this process, a look for lost agents that waits for one, or writes that take every
        thread of the event loop's pool must not hold it up (the tools would be stopped for
        nothing)."""
        while not stop.is_set():
            try:
                await asyncio.wait_for(stop.wait(), self.heartbeat_s)
                return
            except asyncio.TimeoutError:
                pass
            await self.beat_now(beat())

    async def beat_now(self, write: Callable[[], object]) -> None:
        """One heartbeat (`write`, in a daemon thread: one that hangs on a server gone without
        a word holds up neither the event loop nor the interpreter's exit), its commit or
        failure noted. A commit counts from when the beat began: its lease runs from then."""
        loop = asyncio.get_running_loop()
        began = loop.time()
        try:
            await _in_daemon_thread(write)
        except Exception as e:  # noqa: BLE001 - the database failed: said once, waited out
            self.beat_failed(loop.time())
            (log.debug if self._failing else log.warning)("heartbeat failed: %s", e)
            self._failing = True
        else:
            self.beat_ok(began)
            self._failing = False


async def _in_daemon_thread(fn: Callable[[], object]) -> object:
    loop = asyncio.get_running_loop()
    done: asyncio.Future = loop.create_future()

    def settle(result: object, error: BaseException | None) -> None:
        if not done.done():
            done.set_exception(error) if error is not None else done.set_result(result)

    def work() -> None:
        try:
            result, error = fn(), None
        except BaseException as e:  # noqa: BLE001 - handed to the awaiting task
            result, error = None, e
        try:
            loop.call_soon_threadsafe(settle, result, error)
        except RuntimeError:  # the loop has closed: nobody waits any more
            pass

    threading.Thread(target=work, name="heartbeat", daemon=True).start()
    return await done
