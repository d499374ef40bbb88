"""One change watcher per process (steepy/engine/changes.py): an engine and the live feed in
one process share it, and both still wake at once on a commit of another connection."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path

from steepy.engine.changes import TASK_NAME, watcher_of
from steepy.engine.engine import Engine
from steepy.http.context import ApiContext
from steepy.registry import open_registry
from tests.engine.test_engine import MACROS, SERVICES, _settings, _submit
import pytest

EMPTY = "api: 4.7.0\nname: nothing to do\nactions: []\n"


def watching_tasks() -> int:
    """How many change watchers run in this event loop (one per database)."""
    return sum(1 for t in asyncio.all_tasks() if t.get_name() == TASK_NAME and not t.done())


@pytest.mark.process
async def test_an_engine_and_a_feed_share_one_watcher_and_both_wake(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'steepy.db'}"
    registry = open_registry(url)
    other = open_registry(url)  # another process's connection (SQLite: its commits are others')
    readers: Counter[str] = Counter()  # the tasks that look at the commit marker: how often
    marker = registry.db.change_marker

    def counted_marker():
        readers[asyncio.current_task().get_name()] += 1
        return marker()

    registry.db.change_marker = counted_marker
    settings = _settings(tmp_path, agents=1)
    settings.sweep_s = settings.heartbeat_s = 60.0  # only the watcher can wake it in time
    engine = Engine(registry, SERVICES, MACROS, settings)
    ctx = ApiContext(registry, SERVICES, MACROS, engine)  # as `steepy serve` has them
    running = asyncio.create_task(engine.run())
    subscription = await ctx.feed.subscribe(None, stop=ctx.stopping)
    try:
        await asyncio.sleep(0.3)  # both follow the database now
        assert watching_tasks() == 1
        sid = await asyncio.to_thread(_submit, other, EMPTY)  # committed elsewhere
        began = time.monotonic()
        events = []
        while not any(e.get("submissionId") == sid for e in events):
            events += await subscription.next_batch(5.0)
            assert time.monotonic() - began < 5, events
        feed_s = time.monotonic() - began
        while other.views.get_submission(sid).status == "ACCEPTED":
            assert time.monotonic() - began < 5, "the engine did not wake"
            await asyncio.sleep(0.01)
        engine_s = time.monotonic() - began
    finally:
        subscription.close()
        ctx.stopping.set()
        engine.stop.set()
        await asyncio.wait_for(running, 30)
    # one task follows the marker for both (the first subscriber read it once, as a start,
    # and the engine once before its first sweep: the next is 60 s away)
    assert [name for name, count in readers.items() if count > 1] == [TASK_NAME], readers
    # (it looks when the database's wake source says so: after the other's commit at least)
    assert readers[TASK_NAME] >= 1 and sum(readers.values()) - readers[TASK_NAME] <= 2, readers
    assert feed_s < 1 and engine_s < 2, (feed_s, engine_s)  # not a 60 s sweep
    await asyncio.wait_for(ctx.feed._task, 5)
    end = time.monotonic() + 5
    while watching_tasks():  # nobody listens: the watcher ends
        assert time.monotonic() < end
        await asyncio.sleep(0.01)


async def test_the_watcher_tells_whether_a_commit_was_surely_anothers(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'steepy.db'}"
    registry, other = open_registry(url), open_registry(url)
    watcher = watcher_of(registry.db)
    assert watcher_of(registry.db) is watcher and watcher_of(other.db) is not watcher
    told = []
    unsubscribe = watcher.subscribe(told.append)
    second = watcher.subscribe(lambda change: None)
    try:
        await asyncio.to_thread(_submit, other, EMPTY)
        await _until(lambda: told)
        assert told[-1].surely_other and told[-1].known
        await asyncio.sleep(0.1)
        told.clear()
        await asyncio.to_thread(_submit, registry, EMPTY)  # this process's own commit
        await _until(lambda: told)
        assert not told[-1].surely_other
        assert watching_tasks() == 1  # two subscribers, one watcher
    finally:
        unsubscribe()
        second()
    await _until(lambda: not watcher.running)


async def _until(condition, timeout_s: float = 5.0) -> None:
    end = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < end
        await asyncio.sleep(0.01)
