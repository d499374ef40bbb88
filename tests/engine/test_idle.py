"""An idle engine costs little (issue 31): the change watcher looks at once when woken after
a quiet while, soon after and again one interval later, `look_now` reads the marker on demand, and an
idle engine looks for work once per heartbeat."""

from __future__ import annotations

import asyncio
import math
import os
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from steepy.engine.changes import QUICK_S, Change, ChangeWatcher
from steepy.engine.checkpoints import checkpoint_until
from steepy.engine.engine import Engine
from steepy.engine.looks import Looker
from steepy.engine.scheduler import Scheduler
from steepy.engine.timekeeper import Timekeeper
from steepy.model.clock import VirtualClock
from steepy.registry import open_registry
from steepy.registry.failures import DatabaseUnavailable
from tests.engine.test_engine import MACROS, SERVICES, _settings


class Pipe:
    """A wake source: readable once something was written to it."""

    def __init__(self) -> None:
        self.read_end, self.write_end = os.pipe()
        os.set_blocking(self.read_end, False)

    def fileno(self) -> int:
        return self.read_end

    def ring(self) -> None:
        os.write(self.write_end, b"x")

    def drain(self) -> None:
        try:
            while os.read(self.read_end, 1024):
                pass
        except BlockingIOError:
            pass

    def close(self) -> None:
        os.close(self.read_end)
        os.close(self.write_end)


class CountingExecutor(ThreadPoolExecutor):
    """The event loop's threads, counting the calls handed to them (each wakes a thread and
    then the loop) and those that began while another ran (but for the WAL's checkpoints)."""

    calls = 0
    running = 0
    overlapping = 0

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.calls += 1
        checkpoint = "checkpoint" in repr(fn)

        def counted():  # type: ignore[no-untyped-def]
            with self._lock:
                self.overlapping += bool(self.running and not checkpoint)
                self.running += not checkpoint
            try:
                return fn(*args, **kwargs)
            finally:
                with self._lock:
                    self.running -= not checkpoint
        return super().submit(counted)

    _lock = threading.Lock()


class FakeDatabase:
    """A database whose marker the test moves; `commits` are this process's."""

    def __init__(self, source: Pipe | None = None) -> None:
        self.commits = 0
        self.marker = 1
        self.source = source

    def change_marker(self) -> int | None:
        return self.marker

    def forget_watch(self) -> None:
        return None

    def wake_source(self) -> Pipe | None:
        return self.source


async def _settle() -> None:
    for _ in range(20):  # the watcher's task runs its steps
        await asyncio.sleep(0)


async def test_look_now_tells_what_moved_at_once() -> None:
    db = FakeDatabase()  # no wake source: on the (virtual) timer, which never moves here
    watcher = ChangeWatcher(db, clock=VirtualClock())
    told: list[Change] = []
    watcher.look_now()  # not running: nothing to compare with, nothing told
    unsubscribe = watcher.subscribe(told.append)
    try:
        watcher.look_now()
        assert told == []  # the marker has not moved
        db.marker = 2  # another process committed
        watcher.look_now()
        assert told == [Change(surely_other=True)]
        db.marker, db.commits = 3, 1  # this process committed too
        watcher.look_now()
        assert told[-1] == Change(surely_other=False)
        await _settle()
        assert len(told) == 2  # the watcher's own look does not tell it again
    finally:
        unsubscribe()


async def test_woken_after_a_quiet_while_the_watcher_looks_at_once_and_again_later() -> None:
    clock, source = VirtualClock(), Pipe()
    db = FakeDatabase(source)
    watcher = ChangeWatcher(db, clock=clock, interval_s=0.02, safety_s=5.0)
    told: list[Change] = []
    unsubscribe = watcher.subscribe(told.append)
    try:
        await _settle()
        db.marker = 2
        source.ring()
        await _settle()
        assert told == [Change(surely_other=True)]  # no time passed: seen at once
        db.marker = 3  # a second commit within the interval waits for its end
        source.ring()
        await _settle()
        assert len(told) == 1
        clock.advance(0.02)
        await _settle()
        assert len(told) == 2
        clock.advance(0.05)  # quiet again
        source.ring()  # a commit's writes woke it before the commit was complete:
        await _settle()
        assert len(told) == 2  # the look at once sees nothing yet,
        db.marker = 4
        clock.advance(QUICK_S)
        await _settle()
        assert len(told) == 3  # the quick look after it does
        db.marker = 5  # the rest of a burst: the look an interval after the wake
        clock.advance(0.02 - QUICK_S)
        await _settle()
        assert len(told) == 4
    finally:
        unsubscribe()
        await _settle()
        source.close()


@pytest.mark.process  # the engine starts its executor process
async def test_an_idle_engine_looks_once_per_heartbeat(tmp_path: Path) -> None:
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    looks: Counter[str] = Counter()
    for part, name in ((registry.queue, "outlook"), (registry.schedules, "next_due"),
                       (registry.leases, "fetch_next_submission"), (registry.queue, "record"),
                       (registry.leases, "beat"), (registry.leases, "release_orphans")):
        def counted(*args, _call=getattr(part, name), _name=name, **kwargs):
            looks[_name] += 1
            return _call(*args, **kwargs)

        setattr(part, name, counted)
    settings = _settings(tmp_path, agents=2)
    settings.heartbeat_s = settings.sweep_s = 0.25
    engine = Engine(registry, SERVICES, MACROS, settings)
    hops = CountingExecutor()
    asyncio.get_running_loop().set_default_executor(hops)
    running = asyncio.create_task(engine.run())
    try:
        await asyncio.sleep(1.0)  # started, settled
        looks.clear()
        hops.calls, hops.overlapping, commits = 0, 0, registry.db.commits
        await asyncio.sleep(2.0)
        beats, commits, calls = looks["beat"], registry.db.commits - commits, hops.calls
    finally:
        engine.stop.set()
        await asyncio.wait_for(running, 30)
    assert beats >= 3, looks
    # each part looks once per heartbeat (its own commit wakes it, or the sweep after it),
    # not once more on a timer of its own (that was two looks a beat). Now and then both
    # come: the watcher's thread has seen the heartbeat's commit and is waking the parts
    # while the engine sweeps (measured: 10 looks in 8 beats, in about half of the runs)
    for name in ("outlook", "next_due", "fetch_next_submission"):
        assert looks[name] <= beats * 3 // 2 + 1, looks
    assert looks["release_orphans"] == 0, looks  # no lost run: its write lock is not taken
    # nothing to claim: no claim's write transaction; the heartbeat is the only commit
    assert looks["record"] == 0, looks
    assert commits <= beats + 1, (commits, looks)
    # two thread calls a beat: the heartbeat with the look for lost runs, and one look for
    # every part (looks.py); 13 a beat before, each part's look in a thread of its own
    assert calls <= 2 * beats * 3 // 2 + 2, (calls, looks)
    # one after the other (their threads fought for the interpreter's lock): the heartbeat
    # commits at the end of its one transaction (`Leases.beat`), so the look that its
    # commit starts does not run beside the rest of it
    assert hops.overlapping <= beats // 4, (hops.overlapping, looks)


class CheckpointedDatabase(FakeDatabase):
    """A fake database whose checkpoints are counted; `commit` is one of this process."""

    def __init__(self, source: Pipe) -> None:
        super().__init__(source)
        self.checkpoints = 0

    def take_over_checkpoints(self) -> bool:
        return True

    def hand_back_checkpoints(self) -> None:
        return None

    def checkpoint(self) -> None:
        self.checkpoints += 1

    def commit(self, times: int = 1) -> None:
        self.commits += times
        self.marker += 1
        assert self.source is not None
        self.source.ring()


async def _until_checkpoints(db: CheckpointedDatabase, count: int) -> None:
    for _ in range(200):  # the checkpoint runs in a thread (real time)
        if db.checkpoints >= count:
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"{db.checkpoints} checkpoints, expected {count}")


async def test_the_checkpoint_loop_sleeps_without_a_timer_until_something_commits() -> None:
    clock, source = VirtualClock(), Pipe()
    db = CheckpointedDatabase(source)
    watcher = ChangeWatcher(db, interval_s=0.02, safety_s=5.0)  # in real time (quick)
    stop = asyncio.Event()
    task = asyncio.create_task(checkpoint_until(db, stop, every_s=0.5, idle_s=10.0,
                                                busy_commits=20, clock=clock, watcher=watcher))
    try:
        await _until_checkpoints(db, 1)  # one at the start
        await _settle()
        assert clock.deadlines() == [math.inf]  # nothing to copy: it waits for a commit only
        clock.advance(60.0)  # a quiet minute: no checkpoint
        await _settle()
        assert db.checkpoints == 1
        db.commit()  # the first commit since long ago: at once
        await _until_checkpoints(db, 2)
        db.commit()  # a heartbeat soon after: its few pages wait up to idle_s after the last
        await asyncio.sleep(0.1)
        assert await clock.asleep_until(60.0) == 70.0
        clock.advance(9.9)
        await _settle()
        assert db.checkpoints == 2
        clock.advance(0.1)
        await _until_checkpoints(db, 3)
        db.commit(20)  # a busy engine: at most every every_s
        await asyncio.sleep(0.1)
        assert await clock.asleep_until(70.0) == 70.5
        clock.advance(0.5)
        await _until_checkpoints(db, 4)
    finally:
        stop.set()
        await asyncio.wait_for(task, 5)
        await asyncio.sleep(0.1)  # the watcher's last looks
        assert not watcher.running  # it unsubscribed
        source.close()


async def test_one_look_woken_while_it_reads_reads_once_more() -> None:
    """Commits during a look's read may have come after it: one more look follows, however
    many wakes came; a database that fails hands each part its own look."""
    gate, reads, delivered, fallbacks = threading.Event(), [], [], []

    def reader():
        number = len(reads) + 1

        def read() -> int:
            reads.append(number)
            gate.wait(5)
            return number
        return read

    looker = Looker(reader, delivered.append, lambda: fallbacks.append(1), _reraise)
    looker.wake()
    for _ in range(100):
        if reads:
            break
        await asyncio.sleep(0.005)
    looker.wake()  # two commits while it reads
    looker.wake()
    gate.set()
    await looker.close()
    assert delivered == [1, 2] and fallbacks == []

    def failing():
        raise DatabaseUnavailable("the disk is full")
    looker = Looker(lambda: failing, delivered.append, lambda: fallbacks.append(1), _reraise)
    looker.wake()
    await looker.close()
    assert delivered == [1, 2] and fallbacks == [1]


def _reraise(error: BaseException) -> None:
    raise error


async def test_a_part_woken_after_the_look_began_reads_for_itself(tmp_path: Path) -> None:
    """The engine's look is offered to the scheduler and the timekeeper only if nothing woke
    them since it began: a wake of their own (a chain ended here, a schedule added) may
    come from a change the look did not see."""
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    reads: Counter[str] = Counter()
    for part, name in ((registry.queue, "outlook"), (registry.schedules, "next_due")):
        def counted(*args, _call=getattr(part, name), _name=name, **kwargs):
            reads[_name] += 1
            return _call(*args, **kwargs)
        setattr(part, name, counted)
    clock, stop = VirtualClock(), asyncio.Event()
    scheduler = Scheduler(registry.queue, [], lambda sid: None, math.inf, clock)
    timekeeper = Timekeeper(registry, "me", 60.0, math.inf, lambda: None, None, clock)
    tasks = [asyncio.create_task(scheduler.run(stop)), asyncio.create_task(timekeeper.run(stop))]

    async def settled(expected: Counter[str]) -> None:
        for _ in range(200):
            if reads == expected:
                return
            await asyncio.sleep(0.005)
        raise AssertionError(f"{reads} != {expected}")
    try:
        await settled(Counter(outlook=1, next_due=1))  # their first rounds read
        scheduler.offer((False, None), scheduler.wakes)
        timekeeper.offer(None, timekeeper.wakes)
        await asyncio.sleep(0.1)
        assert reads == Counter(outlook=1, next_due=1)  # what was offered was used
        looked = scheduler.wakes, timekeeper.wakes
        scheduler.wake()
        timekeeper.wake()
        scheduler.offer((False, None), looked[0])
        timekeeper.offer(None, looked[1])
        await settled(Counter(outlook=2, next_due=2))
    finally:
        stop.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
