"""An idle process does not look at the database: the change watcher sleeps on the
database's wake source (inotify on SQLite's directory, the LISTENing socket on PostgreSQL)
and still hears another process's commit at once (steepy/registry/wakeups.py)."""

from __future__ import annotations

import asyncio
import select
import time
from pathlib import Path

import pytest

from steepy.engine.changes import ChangeWatcher
from steepy.model.submission import Submission
from steepy.model.workflow import Workflow
from steepy.registry import Registry, open_registry
from steepy.registry.wakeups import watch_directory


def _commit(registry: Registry, name: str) -> None:
    registry.requests.add_submission(Submission(id=name, workflow=Workflow(name=name), name=name))


def _readable(fd: int, timeout_s: float) -> bool:
    return bool(select.select([fd], [], [], timeout_s)[0])


def test_a_directory_watch_wakes_on_another_connections_commit(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'steepy.db'}"
    registry, other = open_registry(url), open_registry(url)
    try:
        watch = watch_directory(str(tmp_path))
        assert watch is not None
        _commit(registry, "before")
        watch.drain()
        assert not _readable(watch.fileno(), 0.1)  # drained: nothing new
        _commit(other, "another's")
        assert _readable(watch.fileno(), 5)
        watch.drain()
        assert not _readable(watch.fileno(), 0.1)
        watch.close()
        watch.close()  # twice is nothing
    finally:
        registry.close()
        other.close()


def test_no_watch_where_there_is_no_directory(tmp_path: Path) -> None:
    assert watch_directory(str(tmp_path / "missing")) is None


async def _idle_then_told(url: str) -> tuple[int, float]:
    """How often an idle watcher looked at the marker in a second, and how soon it told of
    another connection's commit after that (its safety timer is a minute: only the wake source
    can be that quick)."""
    registry, other = open_registry(url), open_registry(url)
    looks = 0
    marker = registry.db.change_marker

    def counted() -> int | None:
        nonlocal looks
        looks += 1
        return marker()

    registry.db.change_marker = counted
    watcher = ChangeWatcher(registry.db, safety_s=60.0)
    told: list = []
    unsubscribe = watcher.subscribe(told.append)
    try:
        assert registry.db.wake_source() is not None
        await asyncio.sleep(1.0)
        idle_looks = looks
        began = time.monotonic()
        await asyncio.to_thread(_commit, other, "wakes it")
        while not told:
            assert time.monotonic() - began < 10, "the commit was not told"
            await asyncio.sleep(0.005)
        return idle_looks, time.monotonic() - began
    finally:
        unsubscribe()
        end = time.monotonic() + 5
        while watcher.running:  # the last subscriber left: it ends at once
            assert time.monotonic() < end, "the watcher did not end"
            await asyncio.sleep(0.01)
        registry.close()
        other.close()


@pytest.mark.database
async def test_an_idle_watcher_on_sqlite_does_not_look_and_wakes_on_a_commit(tmp_path) -> None:
    looks, told_s = await _idle_then_told(f"sqlite:///{tmp_path / 'steepy.db'}")
    assert looks <= 1  # the look when it started; on a 20 ms timer it would be about 50
    assert told_s < 5  # well under the minute of its safety timer


@pytest.mark.postgres
async def test_an_idle_watcher_on_postgresql_does_not_look_and_wakes_on_a_commit(
        postgres_url: str) -> None:
    looks, told_s = await _idle_then_told(postgres_url)
    assert looks <= 1
    assert told_s < 5


@pytest.mark.postgres
def test_a_heartbeat_wakes_no_other_worker_on_postgresql(postgres_url: str) -> None:
    """An idle worker's heartbeat (every 2 s) writes nothing another process acts on: it
    sends no NOTIFY, or each of a cluster's N workers would wake N / 2 times a second for
    the others' heartbeats. A write with events (a new agent, a submission) still wakes."""
    registry, other = open_registry(postgres_url), open_registry(postgres_url)
    try:
        registry.db.change_marker()  # listening from now on
        socket = registry.db.wake_source()
        assert socket is not None
        me = [{"id": "beating", "capabilities": []}]
        other.leases.beat("other", me, 10, False)  # a new agent: AgentArrived, told
        assert _readable(socket.fileno(), 5)
        seen = registry.db.change_marker()
        other.leases.beat("other", me, 10, False)  # the heartbeat alone
        other.leases.heartbeat("other", me, 10)
        assert not _readable(socket.fileno(), 1.0)
        assert registry.db.change_marker() == seen
        _commit(other, "told")
        assert _readable(socket.fileno(), 5)
        assert registry.db.change_marker() > seen
    finally:
        registry.close()
        other.close()
