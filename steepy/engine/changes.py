"""The process's one watcher of database commits: the wake-up bus of the engine and the feed.

A commit of another process (a submission stored by another server, a cancel, a chain that a
remote worker finished) should wake whoever here cares at once, not at its next sweep. One
`ChangeWatcher` per database (per `Connector`) follows `change_marker` (SQLite's
data_version, PostgreSQL's notifications) in one task and tells every subscriber: the engine
(which wakes its parts, engine.py) and the live feed (which reads the new events, feed.py)
both subscribe, so a process looks at the marker once however many parts listen.

Each subscriber is told a `Change`: whether this process committed nothing since the last
look (`surely_other`: the commit was another's), and whether the database says at all
(`known`; where it offers no marker, subscribers are told every `blind_every_s` that
something may have changed). The watcher runs while it has subscribers, in the event loop of
the first one, and stops when the last one leaves.
"""

from __future__ import annotations

import asyncio
import logging
import math
import weakref
from dataclasses import dataclass
from typing import Callable, Protocol

from steepy.model.backoff import LIVE_OUTAGE
from steepy.model.clock import SYSTEM, Clock
from steepy.registry.failures import is_database_failure
from steepy.registry.outage import Outage
from steepy.registry.wakeups import WakeSource

log = logging.getLogger(__name__)

TASK_NAME = "database change watcher"
# a commit's first writes wake the watcher a moment before the commit can be seen (SQLite
# writes the WAL's frames, then its index): a look this long after the one at once sees it
QUICK_S = 0.005


class Watched(Protocol):
    """What the watcher needs of a database (the registry's `Connector`)."""

    commits: int  # write transactions this process committed through it

    def change_marker(self) -> int | None: ...

    def forget_watch(self) -> None: ...

    def wake_source(self) -> WakeSource | None: ...


@dataclass(frozen=True)
class Change:
    surely_other: bool  # this process committed nothing meanwhile: another process did
    known: bool = True  # False: the database cannot tell; something may have changed


Listener = Callable[[Change], None]
Crash = Callable[[BaseException], None]


class ChangeWatcher:
    def __init__(self, db: Watched, interval_s: float = 0.02, blind_every_s: float = 1.0,
                 clock: Clock = SYSTEM, safety_s: float = 5.0):
        # (weakly: `watcher_of' keeps the watcher while the database is referenced elsewhere;
        # held here, it kept every database a process had opened, and their files, for ever)
        self._db = weakref.ref(db)
        self.clock = clock  # its looks and its waits while the database fails
        self.interval_s = interval_s  # how often the marker is looked at, at most
        # with a wake source (steepy.registry.wakeups), the marker is looked at when it says
        # so, and at least this often (a commit it cannot see: another machine's, on NFS)
        self.safety_s = safety_s
        self.blind_every_s = blind_every_s  # a database without a marker: "maybe" this often
        self._listeners: dict[int, tuple[Listener, Crash | None]] = {}
        self._next_key = 0
        self._task: asyncio.Task | None = None
        self._woken: asyncio.Event | None = None  # set by the wake source or the last leaver
        self._last: int | None = None  # the marker last read
        self._looked = -math.inf  # when (on `clock.monotonic') it was last read
        self._again: list[float] = []  # it looked at once on a wake: the looks to follow
        self._own = 0  # this process's commits when it was read

    @property
    def db(self) -> Watched:
        db = self._db()
        if db is None:  # (its last user let go of it: nothing watches it any more)
            raise RuntimeError("the watched database is gone")
        return db

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def subscribe(self, listener: Listener, on_crash: Crash | None = None) -> Callable[[], None]:
        """Tell `listener` of every commit from now on (called in the event loop, never from
        a thread); `on_crash` is told should the watcher die of a bug. Returns the call that
        unsubscribes. The marker is read now when the watcher starts, so a commit between
        this call and the subscriber's first look at the database is seen."""
        loop = asyncio.get_running_loop()
        if self.running:
            assert self._task is not None
            if self._task.get_loop() is not loop and not self._task.get_loop().is_closed():
                raise RuntimeError("a database's change watcher serves one event loop")
        key = self._next_key
        self._next_key += 1
        self._listeners[key] = (listener, on_crash)
        if not self.running:
            self._wake_source()  # watching first: a commit after the marker's read wakes it
            self._last, self._own = self._read(), self.db.commits
            self._task = loop.create_task(self._run(), name=TASK_NAME)
            self._task.add_done_callback(self._ended)

        def unsubscribe() -> None:
            self._listeners.pop(key, None)
            if not self._listeners and self._woken is not None:
                self._woken.set()  # the last one left: the watcher ends now, not at its timer

        return unsubscribe

    def _read(self) -> int | None:
        """The marker, or None while the database fails (the next look tries again)."""
        try:
            return self.db.change_marker()
        except Exception as e:
            if not is_database_failure(e):
                raise
            self.db.forget_watch()
            return None

    def distrust(self) -> None:
        """A subscriber's read of the database failed: the watching connection may be dead
        without raising (a PostgreSQL server that went away without closing it sends no more
        notifications, and looking for them raises nothing), so the next look opens another."""
        self.db.forget_watch()

    async def _run(self) -> None:
        clock = self.clock
        told = clock.monotonic()  # a database without a marker: when subscribers were last told
        # the subscribers' own sweeps go on while the database fails; the live feed waits for
        # this watcher, so it looks again by the live policy (a second at most), said only as
        # often as the engine's outage policy says it (a review counted 103 of an outage's
        # 247 lines from here, one a second)
        outage = Outage(TASK_NAME, log, then="looking again")
        while self._listeners:
            await self._until_worth_a_look()
            try:
                self._looked = clock.monotonic()
                marker = self.db.change_marker()
                outage.over()
            except Exception as e:
                # (anything but the database failing: raised)
                wait_s = outage.wait_after(e, at_most_s=LIVE_OUTAGE.wait_s(1))
                self.db.forget_watch()
                await clock.sleep(wait_s)
                continue
            if marker is None:
                if clock.monotonic() - told >= self.blind_every_s:
                    told = clock.monotonic()
                    self._tell(Change(surely_other=False, known=False))
                continue
            self._compare(marker)

    def look_now(self) -> None:
        """Read the marker now, as the watcher's next look would, and tell the subscribers if
        it moved. An engine calls it before it sweeps (engine.py): what committed before this
        look is then seen by the sweep, what commits after it by the next look, so this
        process's own commits (its heartbeat) need not wake anyone a second time."""
        if self.running:
            self._looked = self.clock.monotonic()
            if (marker := self._read()) is not None:
                self._compare(marker)

    def _compare(self, marker: int) -> None:
        if marker != self._last:
            self._again = self._again[-1:]  # seen: no quick look for it
            surely_other = self.db.commits == self._own  # we wrote nothing meanwhile
            self._last, self._own = marker, self.db.commits
            self._tell(Change(surely_other))

    def _wake_source(self) -> WakeSource | None:
        try:
            return getattr(self.db, "wake_source", lambda: None)()
        except Exception as e:  # noqa: BLE001 - the timer covers; the marker's read says why
            log.debug("no wake source: %s", e)
            return None

    async def _until_worth_a_look(self) -> None:
        """Wait until the marker may have moved: until the database's wake source is
        readable, or on the timer where there is none. An idle process sleeps here at no
        cost. Woken after a quiet interval, it looks at once (a submission reaches an idle
        worker without delay), again `QUICK_S` later unless it saw a commit, and once more
        an interval after the wake. Woken within an interval of its last look, it waits one
        interval (a burst of commits costs one look per interval; a commit whose writes
        woke it before it was complete is seen by the look that follows)."""
        source = self._wake_source()
        if source is None or self._again:
            await self.clock.sleep(self._again.pop(0) if self._again else self.interval_s)
            if source is not None:
                source.drain()
            return
        loop, woken = asyncio.get_running_loop(), asyncio.Event()
        self._woken = woken
        loop.add_reader(source.fileno(), woken.set)
        try:
            await self.clock.wait(woken, self.safety_s)
        finally:
            loop.remove_reader(source.fileno())
            self._woken = None
        if woken.is_set() and self._listeners:
            if self.clock.monotonic() - self._looked >= self.interval_s:
                self._again = [QUICK_S, self.interval_s - QUICK_S]
            else:
                await self.clock.sleep(self.interval_s)
        source.drain()

    def _tell(self, change: Change) -> None:
        for listener, _ in list(self._listeners.values()):
            listener(change)

    def _ended(self, task: asyncio.Task) -> None:
        if task.cancelled() or task.exception() is None:
            return
        error = task.exception()
        log.error("change watcher failed: %s", error, exc_info=error)
        for _, on_crash in list(self._listeners.values()):
            if on_crash is not None:
                on_crash(error)


_WATCHERS: "weakref.WeakKeyDictionary[object, ChangeWatcher]" = weakref.WeakKeyDictionary()


def watcher_of(db: Watched) -> ChangeWatcher:
    """The one change watcher of this database in this process."""
    watcher = _WATCHERS.get(db)
    if watcher is None:
        watcher = _WATCHERS[db] = ChangeWatcher(db)
    return watcher
