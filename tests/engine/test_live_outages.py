"""What keeps pages live through a database outage and a bug: the change watcher
(engine/changes.py) and the live feed (engine/feed.py) wait a failing database out by the live
policy (a second at most, model/backoff.py LIVE_OUTAGE), say it in the outage's words, and
drop the watching connection; a bug in the watcher stops the feed loudly, and every stream
open then ends, instead of leaving the feed silently dead."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from pathlib import Path

import pytest

from steepy.engine.changes import QUICK_S, ChangeWatcher
from steepy.engine.feed import Feed, FeedFailed
from steepy.model import Submission, Workflow
from steepy.model.backoff import DATABASE_OUTAGE, LIVE_OUTAGE
from steepy.registry import Registry, open_registry
from tests.clocks import RecordingClock

OUTAGE = sqlite3.OperationalError("disk I/O error")  # as the driver raises it


class Failing:
    """Wraps one of the registry's calls: raises `error` while `left` > 0 (counting down)."""

    def __init__(self, call, error: BaseException | None = None) -> None:
        self.call, self.error, self.left, self.raised = call, error, 0, 0

    def __call__(self, *args, **kwargs):
        if self.left > 0:
            self.left -= 1
            self.raised += 1
            raise self.error
        return self.call(*args, **kwargs)


class Counted:
    def __init__(self, call) -> None:
        self.call, self.calls = call, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.call(*args, **kwargs)


@pytest.fixture
def registries(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'steepy.db'}"
    registry, other = open_registry(url), open_registry(url)  # other: another process's
    yield registry, other
    registry.close()
    other.close()


def _commit(registry: Registry, name: str) -> str:
    registry.requests.add_submission(Submission(id=name, workflow=Workflow(name=name), name=name))
    return name


async def _until(condition, timeout_s: float = 10.0) -> None:
    end = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < end
        await asyncio.sleep(0.01)


async def _events_of(subscription, submission_id: str, timeout_s: float = 10.0) -> None:
    async with asyncio.timeout(timeout_s):
        while not any(e.get("submissionId") == submission_id
                      for e in await subscription.next_batch(timeout_s)):
            pass


def test_the_live_policy_is_capped_at_a_second() -> None:
    assert [LIVE_OUTAGE.wait_s(n) for n in (1, 2, 3, 100)] == [1, 1, 1, 1]
    assert LIVE_OUTAGE.cap_s == 1 < DATABASE_OUTAGE.cap_s


async def test_the_watcher_says_an_outage_and_waits_by_the_live_policy(registries,
                                                                      caplog) -> None:
    registry, other = registries
    marker = registry.db.change_marker = Failing(registry.db.change_marker, OUTAGE)
    forgot = registry.db.forget_watch = Counted(registry.db.forget_watch)
    clock = RecordingClock()
    watcher = ChangeWatcher(registry.db, clock=clock)
    told = []
    with caplog.at_level(logging.DEBUG, logger="steepy.engine.changes"):
        unsubscribe = watcher.subscribe(told.append)
        try:
            marker.left = 3
            await _until(lambda: marker.left == 0)
            _commit(other, "after")
            await _until(lambda: told)  # back: commits are told again
        finally:
            unsubscribe()
        await _until(lambda: not watcher.running)
    assert told[-1].surely_other and forgot.calls == 3
    looks = (watcher.interval_s, watcher.safety_s, QUICK_S, watcher.interval_s - QUICK_S)
    waits = [s for s in clock.sleeps if s not in looks]
    assert waits == [LIVE_OUTAGE.wait_s(n) for n in (1, 2, 3)]
    # said as often as the engine's outage policy says it (1 s, then 2 s: tries 1 and 2,
    # not 3), though it looks each second (a review counted a line a second from here)
    said = [r for r in caplog.records if r.name == "steepy.engine.changes"]
    assert [r.levelno for r in said] == [logging.ERROR] * 2
    assert all(r.getMessage().startswith("database change watcher: database ")
               and r.getMessage().endswith(": disk I/O error; looking again in 1 s")
               for r in said), [r.getMessage() for r in said]


async def test_the_feed_is_a_second_behind_at_most_after_an_outage(registries, caplog) -> None:
    registry, other = registries
    read = registry.views.feed = Failing(registry.views.feed, OUTAGE)
    forgot = registry.db.forget_watch = Counted(registry.db.forget_watch)
    clock, stop = RecordingClock(), asyncio.Event()
    feed = Feed(registry.views, ChangeWatcher(registry.db), clock=clock)
    subscription = await feed.subscribe(None, stop=stop)
    try:
        await subscription.next_batch(0)  # what the database has: nothing yet
        read.left = 8  # the shared policy would wait 1 + 2 + 4 + 8 + 16 + 30 + 30 + 30 s
        with caplog.at_level(logging.ERROR, logger="steepy.engine.feed"):
            sid = _commit(other, "during")
            await _events_of(subscription, sid)
    finally:
        subscription.close()
        stop.set()
        await asyncio.wait_for(feed._task, 5)
    assert read.raised == 8
    assert [s for s in clock.sleeps if s != feed.poll_s] == [1.0] * 8
    said = [r.getMessage() for r in caplog.records if r.name == "steepy.engine.feed"]
    assert len(said) == 8 and all(m.startswith("live feed: database ") and
                                  m.endswith("disk I/O error; trying again in 1 s") for m in said)
    assert forgot.calls >= 8  # the watching connection dropped with each (it may be dead too)


async def test_a_bug_in_the_watcher_stops_the_feed_loudly(registries, caplog) -> None:
    registry, other = registries
    marker = registry.db.change_marker = Failing(registry.db.change_marker,
                                                 ValueError("a bug in the watcher"))
    watcher, stop = ChangeWatcher(registry.db), asyncio.Event()
    feed = Feed(registry.views, watcher)  # as on an API-only server: nothing else listens
    subscription = await feed.subscribe(None, stop=stop)
    try:
        await subscription.next_batch(0)
        with caplog.at_level(logging.ERROR):
            marker.left = 1
            _commit(other, "wakes the watcher")  # it looks at the marker when woken
            with pytest.raises(FeedFailed, match="a bug in the watcher"):
                async with asyncio.timeout(5):  # the stream ends now, not after its wait
                    await subscription.next_batch(30)
        assert feed._task.done() and isinstance(feed._task.exception(), FeedFailed)
        assert isinstance(feed._task.exception().__cause__, ValueError)
        failed = [r for r in caplog.records if r.name == "steepy.engine.feed"]
        assert [(r.levelno, r.getMessage()) for r in failed] == [
            (logging.CRITICAL, "live feed failed: its change watcher failed: a bug in the watcher")]
        # the client's reconnection starts the feed (and its watcher) again
        again = await feed.subscribe(None, stop=stop)
        sid = _commit(other, "later")
        await _events_of(again, sid)
        again.close()
    finally:
        subscription.close()
        stop.set()
        await asyncio.wait_for(feed._task, 5)


async def test_a_feed_that_cannot_start_answers_its_subscriber(registries) -> None:
    registry, _ = registries
    last = registry.views.last_event_id = Failing(registry.views.last_event_id, OUTAGE)
    stop = asyncio.Event()
    feed = Feed(registry.views, ChangeWatcher(registry.db))
    last.left = 1
    async with asyncio.timeout(5):
        with pytest.raises(sqlite3.OperationalError):  # the API answers 503
            await feed.subscribe(None, stop=stop)
        subscription = await feed.subscribe(None, stop=stop)  # the next one starts it
    subscription.close()
    stop.set()
    await asyncio.wait_for(feed._task, 5)
