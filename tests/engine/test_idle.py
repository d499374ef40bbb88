"""An idle engine costs little (issue 31): the change watcher looks at once when woken after
a quiet while, soon after and again one interval later, `look_now` reads the marker on demand, and an
idle engine looks for work once per heartbeat."""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from pathlib import Path

import pytest

from steepy.engine.changes import QUICK_S, Change, ChangeWatcher
from steepy.engine.engine import Engine
from steepy.model.clock import VirtualClock
from steepy.registry import open_registry
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
    for part, name in ((registry.queue, "next_wake_up"), (registry.schedules, "next_due"),
                       (registry.leases, "fetch_next_submission"),
                       (registry.leases, "heartbeat"), (registry.leases, "release_orphans")):
        def counted(*args, _call=getattr(part, name), _name=name, **kwargs):
            looks[_name] += 1
            return _call(*args, **kwargs)

        setattr(part, name, counted)
    settings = _settings(tmp_path, agents=2)
    settings.heartbeat_s = settings.sweep_s = 0.25
    engine = Engine(registry, SERVICES, MACROS, settings)
    running = asyncio.create_task(engine.run())
    try:
        await asyncio.sleep(1.0)  # started, settled
        looks.clear()
        await asyncio.sleep(2.0)
        beats = looks["heartbeat"]
    finally:
        engine.stop.set()
        await asyncio.wait_for(running, 30)
    assert beats >= 3, looks
    # each part looks once per heartbeat (its own commit wakes it, or the sweep after it),
    # not once more on a timer of its own (that was two looks a beat). Now and then both
    # come: the watcher's thread has seen the heartbeat's commit and is waking the parts
    # while the engine sweeps (measured: 10 looks in 8 beats, in about half of the runs)
    for name in ("next_wake_up", "next_due", "fetch_next_submission"):
        assert looks[name] <= beats * 3 // 2 + 1, looks
    assert looks["release_orphans"] == 0, looks  # no lost run: its write lock is not taken
