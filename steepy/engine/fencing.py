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

from steepy.registry.failures import is_database_failure

log = logging.getLogger(__name__)


class LeaseKeeper:
    def __init__(self, lease_s: float, heartbeat_s: float, fences_tools: bool, now: float):
        self.lease_s, self.heartbeat_s, self.fences_tools = lease_s, heartbeat_s, fences_tools
        self.last_ok = now  # when the heartbeat last committed (or the engine started)
        self._ok_since: float | None = None  # heartbeats committed in a row since (None: all)
        self._failing = False  # `keep_beating`: the last beat failed (said once)
        self._noting = threading.Lock()  # (the heartbeat's thread notes beats too)

    def beat_ok(self, now: float) -> None:
        with self._noting:
            self.last_ok = max(self.last_ok, now)
            if self._ok_since is not None and now - self._ok_since >= self.lease_s:
                self._ok_since = None

    def beat_failed(self, now: float) -> None:
        with self._noting:  # judging again a lease after heartbeats commit again
            self._ok_since = now

    def judging(self, now: float) -> bool:
        """Whether this engine may count other engines' agents lost now."""
        return self._ok_since is None or now - self._ok_since >= self.lease_s

    def lapsing(self, now: float) -> bool:
        """Whether its tools must stop now: see the module's docstring."""
        return self.fences_tools and now - self.last_ok >= self._margin_s()

    def _margin_s(self) -> float:
        """How long after the last heartbeat's commit the tools stop."""
        # (a lease of less than two heartbeats leaves no room: half a heartbeat's delay)
        return max(self.lease_s - self.heartbeat_s, 1.5 * self.heartbeat_s)

    async def watch(self, stop: asyncio.Event, fence: Callable[[float], None]) -> None:
        """Until `stop`: `fence(seconds since the last heartbeat)` as the lease lapses, and
        every half heartbeat interval while it is lapsing. Asleep until then: a heartbeat
        that commits meanwhile moves the moment on, and the watch, woken, sleeps again (an
        idle engine is woken every few heartbeats, not twice per heartbeat). A task of its
        own: a database call that hangs (a server gone without a word) must not hold it up."""
        loop = asyncio.get_running_loop()
        while not stop.is_set():
            wait_s = (self.last_ok + self._margin_s() - loop.time() if self.fences_tools
                      else None)  # (on one machine nothing lapses: until `stop`)
            if wait_s is not None and wait_s <= 0:
                wait_s = self.heartbeat_s / 2  # lapsing: again and again
            try:
                await asyncio.wait_for(stop.wait(), wait_s)
            except asyncio.TimeoutError:
                pass
            now = loop.time()
            if not stop.is_set() and self.lapsing(now):
                fence(now - self.last_ok)

    async def keep_beating(self, beat: Callable[[], Callable[[], object]],
                           stop: asyncio.Event) -> None:
        """Until `stop`: every heartbeat interval, `beat()()` (the heartbeat's transaction)
        in a daemon thread of its own, its commit or failure noted (`beat_ok` counts from
        when the beat began: its lease runs from then). The beat under way when `stop` is
        set ends before this does (it would write the agents back after the engine forgot
        them).

        The thread keeps its own time and wakes nobody: the event loop learns of beats
        from `last_ok` (the watch reads it as it wakes), so an idle engine's heartbeat is
        one wake-up of one thread (it was a thread started per beat, and the event loop
        woken to start it and again at its end). A thread of its own on PostgreSQL: a long
        write of this process, a look for lost agents that waits for one, or writes that
        take every thread of the event loop's pool must not hold it up (the tools would be
        stopped for nothing); a daemon: one that hangs on a server gone without a word holds
        up neither the event loop nor the interpreter's exit. Should the thread end by
        itself (a bug), so does this, with its error."""
        loop = asyncio.get_running_loop()
        ended: asyncio.Future = loop.create_future()  # (what ended the thread, if anything)
        stopping = threading.Event()

        def beating() -> None:
            error: BaseException | None = None
            try:
                while not stopping.wait(self.heartbeat_s):
                    self._beat_once(beat, loop.time)
            except BaseException as e:  # noqa: BLE001 - handed to the task: the engine's crash
                error = e
            try:
                loop.call_soon_threadsafe(_settle, ended, error)
            except RuntimeError:  # the loop has closed: nobody waits any more
                pass

        threading.Thread(target=beating, name="heartbeat", daemon=True).start()
        stopped = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait([stopped, ended], return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()
            stopping.set()
        await ended

    def _beat_once(self, beat: Callable[[], Callable[[], object]],
                   clock: Callable[[], float]) -> None:
        """(In the heartbeat's thread) One heartbeat, its commit or failure noted. What
        fails but the database (as the beat is made, or in its write: a statement the
        server refuses) is a bug: it ends the thread, and the engine with it."""
        began, write = clock(), beat()
        try:
            write()
        except Exception as e:  # noqa: BLE001 - the database failed: said once, waited out
            if not is_database_failure(e):
                raise
            self.beat_failed(clock())
            (log.debug if self._failing else log.warning)("heartbeat failed: %s", e)
            self._failing = True
        else:
            self.beat_ok(began)
            self._failing = False


def _settle(ended: asyncio.Future, error: BaseException | None) -> None:
    if not ended.done():
        ended.set_exception(error) if error is not None else ended.set_result(None)
