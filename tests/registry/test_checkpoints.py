"""SQLite's WAL checkpoints off an engine's hot path: while an engine has taken them over,
its commits never checkpoint (the commit that passes 1,000 pages used to copy them and sync
the file); the engine's own thread does, and hands them back when it stops."""

from __future__ import annotations

import asyncio
import sqlite3

from steepy.engine import Engine
from steepy.model import ProcessChain, Submission, Workflow
from steepy.registry import open_registry
from tests.engine.test_engine import MACROS, SERVICES, _settings


def _autocheckpoint(registry) -> int:
    raw = registry.db.engine.raw_connection()
    try:
        return raw.cursor().execute("PRAGMA wal_autocheckpoint").fetchone()[0]
    finally:
        raw.close()


def _commit_many(registry, sid: str, commits: int = 300) -> None:
    registry.requests.add_submission(Submission(id=sid, workflow=Workflow(name=sid), name=sid))
    for i in range(commits):
        registry.submissions.add_chains(sid, [ProcessChain(id=f"{sid}-{i}-{j}")
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
