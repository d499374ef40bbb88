"""Waiting out a database that cannot be used, written once (registry/outage.py): the policy
(1 s, doubling, at most 30 s), what is said, what is raised, and errors classified alike whether
SQLAlchemy wrapped them or a driver raised them itself (the hot path's cursors)."""

from __future__ import annotations

import ast
import asyncio
import logging
import sqlite3
from pathlib import Path

import psycopg
import pytest
from sqlalchemy.exc import OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from steepy import events as ev
from steepy.model.backoff import DATABASE_OUTAGE
from steepy.registry.offload import persist
from steepy.registry.records import add_event
from steepy.registry.outage import Outage, database_failure_said, in_rounds, outlasting
from tests.clocks import RecordingClock

log = logging.getLogger("test.outage")
RAW = [sqlite3.OperationalError("database is locked"), sqlite3.OperationalError("disk I/O error"),
       psycopg.OperationalError("connection refused"),
       OperationalError("SELECT 1", {}, Exception("disk I/O error")),
       psycopg.errors.IdleInTransactionSessionTimeout("terminating connection due to "
                                                      "idle-in-transaction timeout"),
       PoolTimeout("QueuePool limit of size 5 overflow 10 reached, connection timed out")]
BUGS = [sqlite3.IntegrityError("UNIQUE constraint failed"), ValueError("a bug"),
        sqlite3.ProgrammingError("syntax error")]


def test_the_policy_doubles_from_one_second_up_to_the_cap() -> None:
    assert [DATABASE_OUTAGE.wait_s(n) for n in range(1, 9)] == [1, 2, 4, 8, 16, 30, 30, 30]
    assert DATABASE_OUTAGE.wait_s(10_000) == DATABASE_OUTAGE.cap_s == 30


@pytest.mark.parametrize("error", RAW, ids=lambda e: f"{type(e).__module__}.{type(e).__name__}")
def test_a_failure_of_the_database_is_said_and_waited_out(error, caplog) -> None:
    outage = Outage("tester", log)
    with caplog.at_level(logging.ERROR, logger=log.name):
        waits = [outage.wait_after(error) for _ in range(3)]
        outage.over()
        waits.append(outage.wait_after(error))
    assert waits == [1, 2, 4, 1]
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 4 and lines[0].startswith("tester: ")
    assert [line.rsplit("; ", 1)[1] for line in lines] == [
        "trying again in 1 s", "trying again in 2 s", "trying again in 4 s", "trying again in 1 s"]


@pytest.mark.parametrize("error", BUGS, ids=lambda e: type(e).__name__)
def test_anything_else_is_raised_and_not_said(error, caplog) -> None:
    with caplog.at_level(logging.DEBUG, logger=log.name):
        with pytest.raises(type(error)):
            try:
                raise error
            except Exception as e:
                Outage("tester", log).wait_after(e)
        with pytest.raises(type(error)):
            with database_failure_said(log, "tester: %s"):
                raise error
    assert caplog.records == []


async def test_outlasting_repeats_a_call_on_the_clock_until_it_succeeds(caplog) -> None:
    clock, calls = RecordingClock(), []

    async def flaky() -> str:
        calls.append(clock.monotonic())
        if len(calls) <= 6:
            raise sqlite3.OperationalError("database is locked")  # raw, as the hot path's
        return "stored"

    with caplog.at_level(logging.ERROR, logger=log.name):
        assert await outlasting("storing", flaky, log, clock=clock,
                                then="resuming") == "stored"
    assert clock.sleeps == [1, 2, 4, 8, 16, 30]
    assert calls == [0, 1, 3, 7, 15, 31, 61]
    assert "storing: " in caplog.text and "; resuming in 30 s" in caplog.text


async def test_outlasting_gives_up_when_told_and_raises_a_bug_at_once() -> None:
    clock = RecordingClock()

    async def failing() -> None:
        raise psycopg.OperationalError("server closed the connection unexpectedly")

    with pytest.raises(psycopg.OperationalError):
        await outlasting("storing", failing, log, clock=clock, give_up=lambda: True)

    async def buggy() -> None:
        raise sqlite3.IntegrityError("NOT NULL constraint failed")

    with pytest.raises(sqlite3.IntegrityError):
        await outlasting("storing", buggy, log, clock=clock)
    assert clock.sleeps == []


async def test_persist_goes_through_it() -> None:
    tries: list[int] = []

    def locked_once() -> str:
        tries.append(1)
        if len(tries) == 1:
            raise sqlite3.OperationalError("database is locked")
        return "done"

    assert await persist("storing", lambda: False, locked_once) == "done"
    assert len(tries) == 2
    with pytest.raises(sqlite3.OperationalError):
        await persist("storing", lambda: True, lambda: (_ for _ in ()).throw(
            sqlite3.OperationalError("database is locked")))


def test_a_place_that_gives_up_says_the_failure_and_goes_on(caplog) -> None:
    with caplog.at_level(logging.ERROR, logger=log.name):
        with database_failure_said(log, "chain %s: not recorded (%s); it runs again",
                                   "c1") as dropped:
            raise sqlite3.OperationalError("database or disk is full")
        with database_failure_said(log, "never said: %s") as fine:
            pass
    assert isinstance(dropped.error, sqlite3.OperationalError) and fine.error is None
    assert len(caplog.records) == 1
    message = caplog.records[0].getMessage()
    assert message.startswith("chain c1: not recorded (database ") and message.endswith(
        "); it runs again") and "disk is full" in message


async def test_in_rounds_waits_by_the_policy_on_the_clock(caplog) -> None:
    clock, stop, rounds = RecordingClock(), asyncio.Event(), []

    async def one_round() -> float:
        rounds.append(clock.monotonic())
        if len(rounds) in (1, 2, 4):
            raise sqlite3.OperationalError("disk I/O error")
        if len(rounds) == 5:
            stop.set()
        return 5.0

    await in_rounds("rounds", one_round, asyncio.Event(), stop, log, clock)
    assert clock.sleeps == [1, 2, 5, 1]  # a round that works starts the policy over


def test_no_other_module_writes_its_own_backoff() -> None:
    """The policies' numbers have one home (model/backoff.py makes every `Doubling`), and a
    failure of the database is waited out through outage.py: no other module sleeps or waits
    in an `except` block that asks `is_database_failure` itself (as the change watcher did: 1 s
    at a time, said at debug level)."""
    root = Path(__file__).resolve().parents[2] / "steepy"
    offenders = []
    for path in root.rglob("*.py"):
        where = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and _called(node) == "Doubling" \
                    and where != "model/backoff.py":
                offenders.append(f"{where}:{node.lineno} makes a Doubling")
            if isinstance(node, ast.ExceptHandler) and where != "registry/outage.py":
                called = {_called(n) for n in ast.walk(node) if isinstance(n, ast.Call)}
                if "is_database_failure" in called and called & {"sleep", "wait", "wait_event"}:
                    offenders.append(f"{where}:{node.lineno} waits out the database by hand")
    assert offenders == []


def _called(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


def test_a_write_whose_connection_is_lost_fails_as_the_database_failure_it_is(tmp_path) -> None:
    """A write transaction whose connection the driver has given up on (PostgreSQL stopped
    under a heartbeat) ends with the driver's error, a database failure that is waited out;
    tidying up the lost connection raised SQLAlchemy's PendingRollbackError instead, which
    stopped an engine with an internal error once."""
    from steepy.registry import open_registry
    from steepy.registry.failures import is_database_failure

    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    try:
        with pytest.raises(sqlite3.OperationalError) as failed:
            with registry.db.write() as conn:
                conn.invalidate()  # what SQLAlchemy does when the server closed the connection
                raise sqlite3.OperationalError("disk I/O error")
        assert is_database_failure(failed.value)
        with registry.db.write() as conn:  # and the next transaction has a connection again
            assert conn.exec_driver_sql("SELECT 1").scalar() == 1
    finally:
        registry.close()


def test_a_write_whose_body_caught_its_lost_connection_fails_as_a_database_failure(
        tmp_path) -> None:
    """The body caught the error of its lost connection and ended as if it had written: the
    transaction cannot commit, and says so as a database failure (waited out), not as
    SQLAlchemy's PendingRollbackError from the statements the end of a write sends."""
    from steepy.registry import open_registry
    from steepy.registry.failures import DatabaseUnavailable, is_database_failure

    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    try:
        with pytest.raises(DatabaseUnavailable, match="connection .* lost") as failed:
            with registry.db.write() as conn:
                add_event(conn, None, ev.AgentLeft(agent="a", reason="lost"))  # (events to write at the end)
                conn.invalidate()
        assert is_database_failure(failed.value)
        assert "steepy.db" in str(failed.value)
        with pytest.raises(DatabaseUnavailable, match="connection .* lost"):
            with registry.db.read() as conn:
                conn.invalidate()
    finally:
        registry.close()


def test_tries_sooner_than_the_policy_are_said_as_often_as_its_tries(caplog) -> None:
    """An engine's heartbeat tries every 2 s whatever the policy's wait (its leases must
    hold), but a long outage is said as the policy would say it: not a line every 2 s."""
    outage = Outage("tester", log)
    error = sqlite3.OperationalError("disk I/O error")
    with caplog.at_level(logging.ERROR, logger=log.name):
        waits = [outage.wait_after(error, at_most_s=2) for _ in range(10)]
    assert waits == [1, 2, 2, 2, 2, 2, 2, 2, 2, 2]
    said = [r.getMessage() for r in caplog.records]
    assert [m.rsplit("; ", 1)[1] for m in said] == ["trying again in 1 s"] + [
        "trying again in 2 s"] * 4  # tries 1, 2, 3 (policy: 4 s), 5 (8 s), 9 (16 s)
    outage.over()
    assert outage.wait_after(error, at_most_s=2) == 1


def test_a_wait_under_a_second_is_said_as_it_is(caplog) -> None:
    """A heartbeat of 500 ms tries every half second: `0.5 s', not `0 s' (a review)."""
    outage = Outage("tester", log)
    error = sqlite3.OperationalError("disk I/O error")
    with caplog.at_level(logging.ERROR, logger=log.name):
        assert outage.wait_after(error, at_most_s=0.5) == 0.5
        outage.over()
        assert outage.wait_after(error, at_most_s=0.25) == 0.25
    assert [r.getMessage().rsplit("; ", 1)[1] for r in caplog.records] == [
        "trying again in 0.5 s", "trying again in 0.25 s"]
