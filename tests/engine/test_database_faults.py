"""Faults of the database under a running engine: a disk that fills, a database that refuses
to grow. The engine does not crash (errors of the driver itself, raised by the hot path's and
the checkpoints' DBAPI cursors, are database failures like SQLAlchemy's), backs off, keeps the
outcomes of finished tools in memory, and once there is room again finishes the submission
with every tool run exactly once.

Also: which errors are failures of the database (wait and try again) and which are bugs."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import event, exc

from steepy.cli import main
from steepy.engine.engine import Engine
from steepy.model.service import Service
from steepy.model.submission import SubmissionStatus as SS
from steepy.registry import open_registry
from steepy.registry.failures import describe, is_database_failure
from tests.conftest import ROOT
from tests.engine.test_disk import _fill, disk  # noqa: F401 - a fixture: a 4-MB tmpfs
from tests.engine.test_engine import MACROS, SERVICES, _settings, _submit

TOOLS = 12


def _marking(tmp_path: Path) -> tuple[dict, Path]:
    """Services with `mark': appends its argument to a file (outside the database's disk),
    says 30 long lines (their attempt's last lines take pages of their own in the database,
    written by the hot path's cursor) and takes a little while."""
    lines = tmp_path / "marks.txt"
    script = tmp_path / "mark.sh"
    script.write_text(f'#!/bin/sh\necho "$1" >> "{lines}"\n'
                      f'for i in $(seq 30); do echo "$i {"x" * 200}"; done\nsleep 0.3\n')
    script.chmod(0o755)
    mark = Service.from_json({
        "id": "mark", "name": "mark", "path": str(script), "runtime": "other",
        "parameters": [{"id": "name", "name": "name", "type": "input",
                        "cardinality": "1..1", "dataType": "string"}]})
    return {**SERVICES, "mark": mark}, lines


WORKFLOW = f"""
api: 4.7.0
name: marks
vars:
  - {{id: items, value: {[str(i) for i in range(TOOLS)]}}}
actions:
  - type: for
    input: items
    enumerator: i
    actions:
      - {{id: mark, type: execute, service: mark, inputs: [{{id: name, var: i}}]}}
"""


async def _until(condition, what: str, engine: Engine, task: asyncio.Task,
                 timeout_s: float = 60) -> None:
    end = time.monotonic() + timeout_s
    while not condition():
        assert not task.done() and engine.failure is None, (what, engine.failure)
        assert time.monotonic() < end, what
        await asyncio.sleep(0.05)


def _marks(lines: Path) -> list[str]:
    return lines.read_text().split() if lines.exists() else []


def _no_crash(caplog) -> None:
    for record in caplog.records:
        assert record.exc_info is None, record.getMessage()
        assert record.levelno < logging.CRITICAL, record.getMessage()


@pytest.mark.process
async def test_a_disk_that_fills_mid_run(disk, tmp_path, monkeypatch,  # noqa: F811
                                         caplog) -> None:
    """The real thing: the database on a 4-MB file system that fills while tools run. The
    WAL then holds pages the database file has not got yet, so the engine's next checkpoint
    must grow the file: SQLite's driver says SQLITE_FULL (the crash of issue 24)."""
    monkeypatch.chdir(ROOT)
    caplog.set_level(logging.INFO)
    services, lines = _marking(tmp_path)
    registry = open_registry(f"sqlite:///{disk / 'steepy.db'}")
    sid = _submit(registry, WORKFLOW)
    engine = Engine(registry, services, MACROS, _settings(tmp_path))
    task = asyncio.create_task(engine.run(until_submission=sid))
    try:
        await _until(lambda: len(_marks(lines)) >= 3, "tools started", engine, task)
        # (the loop waits here: no checkpoint starts between the padding and the filling)
        with registry.db.write() as conn:
            conn.exec_driver_sql("CREATE TABLE padding (x BLOB)")
            conn.exec_driver_sql("INSERT INTO padding VALUES (zeroblob(300000))")
        _fill(disk)
        await _until(lambda: "checkpoint of the database" in caplog.text
                     and "the disk is full" in caplog.text, "the checkpoint failed", engine, task)
        await asyncio.sleep(2)  # tools end meanwhile: their outcomes wait in memory
        assert not task.done() and engine.failure is None
        (disk / "filler").unlink()
        await asyncio.wait_for(asyncio.shield(task), 90)
    finally:
        engine.stop.set()
        await asyncio.gather(task, return_exceptions=True)
    _ran_each_tool_once(engine, registry, sid, lines, caplog)


def _ran_each_tool_once(engine: Engine, registry, sid: str, lines, caplog) -> None:
    """The engine lived through it and finished the submission, every tool run once."""
    assert engine.failure is None, engine.failure
    assert registry.views.get_submission(sid).status == SS.SUCCESS
    assert sorted(_marks(lines), key=int) == [str(i) for i in range(TOOLS)]  # each once
    _no_crash(caplog)
    registry.close()


@pytest.mark.process
async def test_a_database_that_cannot_grow(tmp_path, monkeypatch, caplog) -> None:
    """SQLite's own SQLITE_FULL, at once and in every statement that needs a page more:
    `PRAGMA max_page_count' at the current size on every connection. The hot path's
    statements, sent to the driver's cursor, raise the driver's error."""
    monkeypatch.chdir(ROOT)
    caplog.set_level(logging.INFO)
    services, lines = _marking(tmp_path)
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    limit = [4294967294]  # pages (SQLite's largest)

    @event.listens_for(registry.engine, "checkout")
    def _limit(dbapi_connection, _record, _proxy) -> None:
        dbapi_connection.execute(f"PRAGMA max_page_count={limit[0]}")

    sid = _submit(registry, WORKFLOW)
    engine = Engine(registry, services, MACROS, _settings(tmp_path))
    task = asyncio.create_task(engine.run(until_submission=sid))
    try:
        await _until(lambda: len(_marks(lines)) >= 2, "tools started", engine, task)
        limit[0] = 1  # no page more than the file has now
        await _until(lambda: "database or disk is full" in caplog.text, "writes failed",
                     engine, task)
        await asyncio.sleep(2)  # the tools running end meanwhile: their ends wait in memory
        assert not task.done() and engine.failure is None
        limit[0] = 4294967294
        await asyncio.wait_for(asyncio.shield(task), 90)
    finally:
        engine.stop.set()
        await asyncio.gather(task, return_exceptions=True)
    _ran_each_tool_once(engine, registry, sid, lines, caplog)


@pytest.mark.process
async def test_a_failed_attempt_is_on_the_timeline_also_when_the_disk_was_full(
        tmp_path, monkeypatch, caplog) -> None:
    """Every chain's first attempt fails (its retry policy runs it again) while the database
    cannot grow: the attempts' `chain.attemptFailed' events, reported by the agents, waited
    and were stored once there was room, as the attempts' rows and the runs' ends were (they
    were dropped after one try: the retry that followed was on the timeline, the failure
    that caused it not)."""
    monkeypatch.chdir(ROOT)
    caplog.set_level(logging.INFO)
    services, lines = _marking(tmp_path)
    script = tmp_path / "mark.sh"  # fails the first time for each name
    script.write_text(script.read_text().replace(
        "sleep 0.3\n", f'sleep 0.3\n[ $(grep -cx "$1" "{lines}") -ge 2 ] || exit 3\n'))
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    limit = [4294967294]

    @event.listens_for(registry.engine, "checkout")
    def _limit(dbapi_connection, _record, _proxy) -> None:
        dbapi_connection.execute(f"PRAGMA max_page_count={limit[0]}")

    sid = _submit(registry, WORKFLOW.replace(
        "inputs: [{id: name, var: i}]}", "inputs: [{id: name, var: i}],\n"
        "          retries: {maxAttempts: 2}}"))
    engine = Engine(registry, services, MACROS, _settings(tmp_path))
    task = asyncio.create_task(engine.run(until_submission=sid))
    try:
        await _until(lambda: len(_marks(lines)) >= 2, "tools started", engine, task)
        limit[0] = 1
        await _until(lambda: "database or disk is full" in caplog.text, "writes failed",
                     engine, task)
        await asyncio.sleep(2)  # attempts fail meanwhile
        limit[0] = 4294967294
        await asyncio.wait_for(asyncio.shield(task), 90)
    finally:
        engine.stop.set()
        await asyncio.gather(task, return_exceptions=True)
    assert engine.failure is None, engine.failure
    assert registry.views.get_submission(sid).status == SS.SUCCESS
    assert sorted(_marks(lines), key=int) == sorted([str(i) for i in range(TOOLS)] * 2, key=int)
    events = registry.views.events(sid)
    failed = [e for e in events if e["kind"] == "chain.attemptFailed"]
    retried = [e for e in events if e["kind"] == "chain.retryScheduled"]
    assert len(retried) == TOOLS and len(failed) == TOOLS, (len(retried), len(failed))
    assert "not stored" not in caplog.text  # none given up
    registry.close()


@pytest.mark.process
async def test_an_older_copy_put_back_stops_the_engine_saying_so(tmp_path, monkeypatch,
                                                                  caplog) -> None:
    """The database file deleted while a tool runs and a backup taken before its chain was
    claimed put back: the copy lacks the run, and the run's end broke a foreign key: a
    CRITICAL `steepy failed' with a traceback, exit code 5 (an operator's review). Now the
    engine says what happened and stops as for a database it cannot use (exit code 4)."""
    from steepy.registry import dbfile
    from steepy.registry.failures import DatabaseUnavailable

    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(dbfile, "FILE_CHECK_S", 0.0)
    started = tmp_path / "started"
    script = tmp_path / "slow.sh"
    script.write_text(f'#!/bin/sh\necho "$1" >> "{started}"\nsleep 3\n')
    script.chmod(0o755)
    services, _ = _marking(tmp_path)
    services["mark"] = Service.from_json({**services["mark"].to_json(), "path": str(script)})
    db = tmp_path / "steepy.db"
    registry = open_registry(f"sqlite:///{db}")
    sid = _submit(registry, WORKFLOW.replace(str(list(map(str, range(TOOLS)))), "['only']"))
    with sqlite3.connect(db) as source, sqlite3.connect(tmp_path / "backup.db") as target:
        source.backup(target)  # before the chain is claimed
    engine = Engine(registry, services, MACROS, _settings(tmp_path))
    task = asyncio.create_task(engine.run(until_submission=sid))
    try:
        await _until(started.exists, "the tool started", engine, task)
        for name in ("steepy.db", "steepy.db-wal", "steepy.db-shm"):
            (tmp_path / name).unlink(missing_ok=True)
        await asyncio.sleep(0.5)
        (tmp_path / "backup.db").replace(db)
        await asyncio.wait_for(asyncio.shield(task), 60)
    finally:
        engine.stop.set()
        await asyncio.gather(task, return_exceptions=True)
    assert isinstance(engine.failure, DatabaseUnavailable), engine.failure
    assert "the file put back is older than this process's own writes" in str(engine.failure)
    assert "FOREIGN KEY constraint failed" in str(engine.failure)
    assert not [r for r in caplog.records if r.levelno >= logging.CRITICAL or r.exc_info]
    registry.close()


# -- which errors are failures of the database ------------------------------------------------


def _sqlite_error(tmp_path: Path, action) -> sqlite3.Error:
    conn = sqlite3.connect(tmp_path / "probe.db", isolation_level=None)
    conn.execute("CREATE TABLE IF NOT EXISTS t (x UNIQUE)")
    try:
        action(conn)
    except sqlite3.Error as e:
        return e
    finally:
        conn.close()
    raise AssertionError("no error")


def _full(conn) -> None:
    conn.execute("PRAGMA max_page_count=1")
    conn.execute("INSERT INTO t VALUES (zeroblob(100000))")


def _locked(conn) -> None:
    other = sqlite3.connect(conn.execute("PRAGMA database_list").fetchone()[2],
                            isolation_level=None, timeout=0)
    conn.execute("BEGIN IMMEDIATE")
    try:
        other.execute("BEGIN IMMEDIATE")
    finally:
        other.close()
        conn.execute("ROLLBACK")


def _read_only(conn) -> None:
    conn.execute("PRAGMA query_only=1")  # SQLITE_READONLY, as a read-only file says
    conn.execute("INSERT INTO t VALUES (1)")


def _twice(conn) -> None:
    conn.execute("INSERT INTO t VALUES (7)")
    conn.execute("INSERT INTO t VALUES (7)")


@pytest.mark.parametrize("action, failure", [
    (_full, True), (_locked, True), (_read_only, True),
    (lambda c: c.execute("SELEKT 1"), False),  # a syntax error: ours
    (_twice, False),  # an IntegrityError: ours
    (lambda c: c.execute("SELECT missing_column FROM t"), False),  # no such column: ours
], ids=["full", "locked", "read-only", "syntax", "integrity", "column"])
def test_sqlite_errors_raw_and_wrapped(tmp_path, action, failure: bool) -> None:
    """The driver's error itself (the hot path's cursors raise those) and SQLAlchemy's
    wrapper of it are classified alike."""
    raw = _sqlite_error(tmp_path, action)
    assert is_database_failure(raw) is failure, raw
    wrapped = exc.DBAPIError.instance("SELECT 1", {}, raw, sqlite3.Error)
    assert is_database_failure(wrapped) is failure, (type(wrapped), raw)
    assert "\n" not in describe(raw, f"sqlite:///{tmp_path / 'probe.db'}")


def test_a_file_that_is_not_a_database(tmp_path) -> None:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"\x13" * 8192)
    raw = _sqlite_error(tmp_path, lambda c: sqlite3.connect(garbage).execute(
        "SELECT * FROM sqlite_master").fetchall())
    assert isinstance(raw, sqlite3.DatabaseError)
    assert is_database_failure(raw)
    assert is_database_failure(exc.DBAPIError.instance("SELECT 1", {}, raw, sqlite3.Error))
    assert "not a SQLite database" in describe(raw, f"sqlite:///{garbage}")


def test_postgres_driver_errors() -> None:
    psycopg = pytest.importorskip("psycopg")
    from psycopg import errors

    for failure in (psycopg.OperationalError("connection lost"),
                    psycopg.InterfaceError("the connection is closed"),
                    errors.AdminShutdown("terminating connection"), errors.DiskFull("full"),
                    errors.ReadOnlySqlTransaction("read-only")):
        assert is_database_failure(failure), failure
        assert is_database_failure(exc.DBAPIError.instance("SELECT 1", {}, failure,
                                                           psycopg.Error)), failure
    for bug in (errors.UniqueViolation("dup"), errors.SyntaxError("syntax"),
                errors.UndefinedColumn("column")):
        assert not is_database_failure(bug), bug
        assert not is_database_failure(exc.DBAPIError.instance("SELECT 1", {}, bug,
                                                               psycopg.Error)), bug
    assert is_database_failure(RuntimeError("x")) is False
    assert "s3cret" not in describe(psycopg.OperationalError("password s3cret refused"),
                                    "postgresql+psycopg://steepy:s3cret@db.example/steepy")


def test_a_command_on_a_file_that_is_not_a_database(tmp_path, monkeypatch) -> None:
    """One line and exit code 4, not a traceback."""
    garbage = tmp_path / "steepy.db"
    garbage.write_bytes(b"\x13" * 8192)
    monkeypatch.chdir(ROOT)
    done = CliRunner().invoke(main, ["list", "--db", f"sqlite:///{garbage}"],
                              catch_exceptions=False)
    assert done.exit_code == 4, done.stderr
    assert done.stderr == (f"steepy: cannot use the database {garbage}: its file is not a "
                           "SQLite database (file is not a database)\n")
