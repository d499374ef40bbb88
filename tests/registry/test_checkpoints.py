"""SQLite's WAL checkpoints off an engine's hot path: while an engine has taken them over,
its commits never checkpoint (the commit that passes 1,000 pages used to copy them and sync
the file); the engine's own thread does, and hands them back when it stops."""

from __future__ import annotations

import asyncio
import sqlite3

from steepy.engine.engine import Engine
from steepy.model import ProcessChain, Submission, Workflow
from steepy.registry import open_registry
from tests.registry.chains import store_chains
from tests.engine.test_engine import MACROS, SERVICES, _settings
import pytest


def _autocheckpoint(registry) -> int:
    raw = registry.db.engine.raw_connection()
    try:
        return raw.cursor().execute("PRAGMA wal_autocheckpoint").fetchone()[0]
    finally:
        raw.close()


def _commit_many(registry, sid: str, commits: int = 300) -> None:
    registry.requests.add_submission(Submission(id=sid, workflow=Workflow(name=sid), name=sid))
    for i in range(commits):
        store_chains(registry, sid, [ProcessChain(id=f"{sid}-{i}-{j}")
                                     for j in range(5)], None)


def _wal_frames(path) -> int:
    """Frames the WAL holds now (a PASSIVE checkpoint of our own tells, and copies them)."""
    with sqlite3.connect(path) as db:
        return db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1]


def test_commits_leave_checkpoints_to_the_process_that_took_them_over(tmp_path) -> None:
    path = tmp_path / "steepy.db"
    registry = open_registry(f"sqlite:///{path}")
    assert _autocheckpoint(registry) == 1000  # SQLite's default: commits checkpoint
    _commit_many(registry, "before")
    assert _wal_frames(path) < 1500  # the commit past 1,000 frames copied them

    assert registry.db.take_over_checkpoints()
    assert _autocheckpoint(registry) == 0
    registry.db.checkpoint()
    _commit_many(registry, "during")
    assert _wal_frames(path) > 1500  # no commit checkpointed
    registry.db.checkpoint()  # what the engine's thread does: nothing left, nothing waits

    registry.db.hand_back_checkpoints()
    assert _autocheckpoint(registry) == 1000


@pytest.mark.process
async def test_an_engine_takes_checkpoints_over_while_it_runs(tmp_path) -> None:
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    engine = Engine(registry, SERVICES, MACROS, _settings(tmp_path))
    running = asyncio.create_task(engine.run())
    try:
        async with asyncio.timeout(30):
            while _autocheckpoint(registry) != 0:
                await asyncio.sleep(0.02)
    finally:
        engine.stop.set()
        await asyncio.wait_for(running, 30)
    assert _autocheckpoint(registry) == 1000  # handed back


def test_other_databases_checkpoint_by_themselves(database_url) -> None:
    registry = open_registry(database_url)
    assert registry.db.take_over_checkpoints() == database_url.startswith("sqlite")
    registry.db.hand_back_checkpoints()


def _wal_restarts(path, registry) -> bool:
    """Whether the next commit writes the WAL from its start (the file is not longer after)."""
    size = path.with_name(path.name + "-wal").stat().st_size
    _commit_many(registry, f"probe-{size}", commits=1)
    return _wal_frames(path) < 100


def test_a_long_wal_starts_over_once_a_reader_lets_it(tmp_path, monkeypatch) -> None:
    """A passive checkpoint never waits, so one that a reader (or, on a busy engine, the
    next commit) keeps from finishing leaves the WAL to grow without end: 85 MB per 1,000
    chains. Past WAL_RESTART_FRAMES the checkpoint waits a little for readers, and the next
    commit starts the WAL over."""
    import threading

    from steepy.registry import connector

    monkeypatch.setattr(connector, "RESTART_WAIT_MS", 10_000)  # the reader leaves in 0.3 s
    path = tmp_path / "steepy.db"
    registry = open_registry(f"sqlite:///{path}")
    assert registry.db.take_over_checkpoints()
    _commit_many(registry, "first", commits=50)
    reader = sqlite3.connect(path, check_same_thread=False)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM process_chains").fetchone()  # holds its snapshot
    _commit_many(registry, "second", commits=50)
    frames = _wal_frames(path)  # copies up to the reader's snapshot, no further
    assert frames > 100

    monkeypatch.setattr(connector, "WAL_RESTART_FRAMES", 10 * frames)  # not long yet
    registry.db.checkpoint()
    assert not _wal_restarts(path, registry)  # what a passive checkpoint alone leaves

    monkeypatch.setattr(connector, "WAL_RESTART_FRAMES", 10)
    threading.Timer(0.3, reader.rollback).start()
    registry.db.checkpoint()  # waits for the reader
    assert _wal_restarts(path, registry)
    registry.db.hand_back_checkpoints()
    reader.close()


def test_closing_leaves_the_database_file_whole_and_the_wal_empty(tmp_path) -> None:
    path = tmp_path / "steepy.db"
    registry = open_registry(f"sqlite:///{path}")
    assert registry.db.take_over_checkpoints()  # nothing checkpoints by itself
    _commit_many(registry, "all", commits=30)
    registry.db.change_marker()  # a watching connection, closed too
    # a connection left open (as those of pools replaced on the way are, when the process
    # ends without its teardown): closing is then not the last close, which would copy the WAL
    other = sqlite3.connect(path)
    other.execute("SELECT count(*) FROM sqlite_master").fetchone()  # it has the WAL open
    registry.close()
    assert path.with_name(path.name + "-wal").stat().st_size == 0
    copy = tmp_path / "copy.db"  # the file alone, as someone copying it would have it
    copy.write_bytes(path.read_bytes())
    other.close()
    with sqlite3.connect(copy) as db:
        assert db.execute("SELECT count(*) FROM process_chains").fetchone()[0] == 150
