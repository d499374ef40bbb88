"""What a PostgreSQL connection sends (read from libpq's trace): a connection lost while idle
in the pool is replaced at its checkout, before the caller's transaction uses it, and a
checkout of a live connection sends the server nothing (SQLAlchemy's pool_pre_ping sent an
empty query each time: a round trip per transaction); BEGIN goes with a transaction's first
statement; a write with events takes the feed's lock and says NOTIFY in one statement,
inserts them and commits, in one round trip; a claim reads its chain and the chain's runs so
far in one statement, sent with the writes that start its run."""

from __future__ import annotations

import re
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import psycopg
import pytest

from steepy.registry import database
from steepy.registry.connector import Connector
from steepy.model import ProcessChain, Submission, Workflow
from steepy.registry import open_registry
from steepy.registry.database import open_engine
from steepy.registry.dialect import CHANNEL, FEED_LOCK
from steepy.registry.records import add_events
from tests.registry.chains import store_chains


@pytest.fixture
def connector(postgres_url):
    engine = open_engine(postgres_url)
    yield Connector(engine)
    engine.dispose()


def _backend(connector: Connector) -> int:
    with connector.read() as conn:
        return conn.exec_driver_sql("SELECT pg_backend_pid()").scalar()


def _read() -> Callable[[Connector], None]:
    def read(connector: Connector) -> None:
        with connector.read() as conn:
            assert conn.exec_driver_sql("SELECT 2").scalar() == 2
    return read


def _traced(connector: Connector, path: Path, transactions: int,
            work: Callable[[Connector], None] = _read()) -> list[str]:
    """The queries the pooled connection sent in `transactions` transactions of `work` (from
    libpq's trace)."""
    raw = connector.engine.raw_connection()
    with open(path, "w") as trace:
        raw.driver_connection.pgconn.trace(trace.fileno())
        raw.close()  # back to the pool, traced
        for _ in range(transactions):
            work(connector)
        raw = connector.engine.raw_connection()
        raw.driver_connection.pgconn.untrace()
        raw.close()
    return [m.removeprefix('"" ').removesuffix(" 0") for m in
            re.findall(r"\tF\t\d+\t(?:Query|Parse)\t *(.*)", path.read_text())]


def _round_trips(path: Path) -> int:
    """How often the client sent after the server had answered (or first), in a trace."""
    sides = re.findall(r"^\S+ \S+\t([FB])\t", path.read_text(), re.M)
    return sum(1 for before, side in zip(["B", *sides], sides) if (before, side) == ("B", "F"))


BEGIN, SELECT_2, COMMIT = '"BEGIN"', '"SELECT 2"', '"COMMIT"'


def test_a_checkout_of_a_live_connection_sends_nothing(connector, tmp_path) -> None:
    _backend(connector)  # one connection, pooled
    sent = _traced(connector, tmp_path / "trace", 5)
    assert sent == [BEGIN, SELECT_2, COMMIT] * 5


def test_begin_goes_in_the_round_trip_of_the_first_statement(connector, tmp_path) -> None:
    _backend(connector)
    _traced(connector, tmp_path / "trace", 5)
    # BEGIN with SELECT 2 in one pipeline, then COMMIT: psycopg alone took three
    assert _round_trips(tmp_path / "trace") == 2 * 5


def test_a_connection_idle_longer_than_the_limit_is_pinged(connector, tmp_path,
                                                           monkeypatch) -> None:
    _backend(connector)
    monkeypatch.setattr(database, "IDLE_PING_S", 0.0)
    time.sleep(0.01)
    sent = _traced(connector, tmp_path / "trace", 3)
    # (and the checkout that stops the trace)
    assert sent == ['";"', BEGIN, SELECT_2, COMMIT] * 3 + ['";"']


def test_a_connection_lost_while_idle_is_replaced_before_the_caller_uses_it(
        connector, postgres_url) -> None:
    pid = _backend(connector)
    from sqlalchemy.engine import make_url

    admin = make_url(postgres_url).set(drivername="postgresql").render_as_string(
        hide_password=False)
    with psycopg.connect(admin, autocommit=True) as conn:
        assert conn.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone()[0]
        end = time.monotonic() + 10
        while conn.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s",
                           (pid,)).fetchone()[0]:
            assert time.monotonic() < end, "the backend did not end"
            time.sleep(0.01)
    assert _backend(connector) != pid  # read on a new connection, without an error
    with connector.write() as conn:
        assert conn.exec_driver_sql("SELECT 3").scalar() == 3


def test_a_write_with_events_sends_them_with_the_feed_lock_and_notify_at_once(connector,
                                                                             tmp_path) -> None:
    def write(connector: Connector) -> None:
        with connector.write() as conn:
            add_events(conn, [{"submission_id": None, "chain_id": None, "kind": "test",
                               "time": datetime.now(timezone.utc), "data": None}])

    _backend(connector)
    sent = _traced(connector, tmp_path / "trace", 2, write)
    assert [q.split(" (")[0] for q in sent] == [
        BEGIN, f'"SELECT pg_advisory_xact_lock({FEED_LOCK}), pg_notify(\'{CHANNEL}\', \'\')"',
        '"INSERT INTO events', COMMIT] * 2
    # BEGIN, the lock, NOTIFY, the insert and COMMIT in one round trip: the server never
    # waits for this client while it holds the feed's lock
    assert _round_trips(tmp_path / "trace") == 2
    with connector.read() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM events WHERE kind = 'test'"
                                    ).scalar() == 2


def test_a_claim_reads_its_chain_and_its_runs_so_far_in_one_statement(postgres_url,
                                                                     tmp_path) -> None:
    registry = open_registry(postgres_url)
    try:
        registry.requests.add_submission(Submission(id="s", workflow=Workflow(name="s")))
        store_chains(registry, "s", [ProcessChain(id="c1")])
        sent = _traced(registry.db, tmp_path / "trace", 1,
                       lambda _: registry.queue.claim_chain("agent"))
    finally:
        registry.close()
    reads = [q for q in sent if '"SELECT' in q and "advisory" not in q]  # (Parse: `"" "..."')
    assert len(reads) == 2, reads  # the candidates, then the chosen chain and its runs
    assert "FOR UPDATE SKIP LOCKED" in reads[0] and "LEFT JOIN" in reads[1]
    # the candidates; the chosen chain read, made RUNNING and given its run; its event with
    # the feed's lock and COMMIT
    assert _round_trips(tmp_path / "trace") == 3


def test_an_end_and_a_claim_together_are_three_round_trips(postgres_url, tmp_path) -> None:
    """The scheduler's usual transaction: a run's end (with its attempt) and the next claim.
    The end's statements go with the claim's look at the candidates; then the chosen chain is
    read and started; then the events go with the feed's lock and COMMIT."""
    from steepy.model.attempt import AttemptRecord
    from steepy.model.submission import ProcessChainStatus as CS
    from steepy.registry import ClaimFor, RunEnd
    from steepy.registry.records import utcnow

    registry = open_registry(postgres_url)
    try:
        registry.requests.add_submission(Submission(id="s", workflow=Workflow(name="s")))
        store_chains(registry, "s", [ProcessChain(id="c1"), ProcessChain(id="c2")])
        first, number = registry.queue.claim_chain("agent")
        attempt = AttemptRecord("e", "svc", 1, utcnow(), utcnow(), outcome="SUCCESS", exit_code=0)
        claimed: list = []
        sent = _traced(registry.db, tmp_path / "trace", 1, lambda _: claimed.extend(
            registry.queue.record([RunEnd(first.chain.id, number, "SUCCESS", CS.SUCCESS, {},
                                          attempts=[attempt], submission_id="s")],
                                  [ClaimFor("agent", frozenset(), None)])))
    finally:
        registry.close()
    assert claimed[0][0].chain.id == "c2"
    assert _round_trips(tmp_path / "trace") == 3, sent  # four before: the end alone


def _terminate(postgres_url: str, pid: int) -> None:
    from sqlalchemy.engine import make_url

    admin = make_url(postgres_url).set(drivername="postgresql").render_as_string(
        hide_password=False)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
        end = time.monotonic() + 10
        while conn.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s",
                           (pid,)).fetchone()[0]:
            assert time.monotonic() < end, "the backend did not end"
            time.sleep(0.01)


@pytest.mark.parametrize("where", ["first statement", "batch"])
def test_a_backend_lost_mid_pipeline_is_a_database_failure_and_the_next_write_works(
        connector, postgres_url, where) -> None:
    """What the pipelines send when the server has gone: the error is one the engine's outage
    handling waits out (the connection is dropped, not rolled back), and the next
    transaction runs on a new connection."""
    from steepy.registry.failures import is_database_failure

    pid = _backend(connector)
    with pytest.raises(Exception) as raised:
        with connector.write() as conn:
            if where == "batch":
                conn.exec_driver_sql("SELECT 1")
            _terminate(postgres_url, pid)
            add_events(conn, [{"submission_id": None, "chain_id": None, "kind": "lost",
                               "time": datetime.now(timezone.utc), "data": None}])
            if where == "first statement":
                conn.exec_driver_sql("SELECT 1")
    assert is_database_failure(raised.value), raised.value
    assert _backend(connector) != pid
    with connector.write() as conn:
        assert conn.exec_driver_sql("SELECT 3").scalar() == 3
    with connector.read() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM events").scalar() == 0


def test_a_first_text_of_several_statements_runs_in_the_transaction(connector) -> None:
    """Several statements in one text need the simple protocol (no pipeline): BEGIN goes
    ahead of them alone, and they are rolled back with the rest."""
    with pytest.raises(RuntimeError):
        with connector.write() as conn:
            conn.exec_driver_sql("SELECT 1; CREATE TABLE several (a int)")
            raise RuntimeError("undo")
    with connector.read() as conn:
        assert conn.exec_driver_sql("SELECT to_regclass('several')").scalar() is None
    with connector.write() as conn:
        conn.exec_driver_sql("SELECT 1; CREATE TABLE several (a int)")
    with connector.read() as conn:
        assert conn.exec_driver_sql("SELECT to_regclass('several')").scalar() == "several"


def test_reading_the_isolation_level_first_keeps_the_transaction(connector) -> None:
    """SQLAlchemy reads the level with a SHOW and rolls back what that began: the caller's
    transaction still begins with its first statement, and rolls back with it."""
    with pytest.raises(RuntimeError):
        with connector.engine.begin() as conn:
            assert conn.get_isolation_level() == "READ COMMITTED"
            conn.exec_driver_sql("CREATE TABLE level_read (a int)")
            raise RuntimeError("undo")
    with connector.read() as conn:
        assert conn.exec_driver_sql("SELECT to_regclass('level_read')").scalar() is None


def test_autocommit_runs_outside_a_transaction_and_leaves_the_pool_as_it_was(
        connector, tmp_path) -> None:
    """AUTOCOMMIT (VACUUM, CREATE INDEX CONCURRENTLY need it) begins nothing; the connection
    goes back to the pool with transactions begun lazily again: BEGIN still rides with the
    first statement, and nothing is left in a transaction."""
    with connector.write() as conn:
        conn.exec_driver_sql("CREATE TABLE cleaned (a int)")
    with connector.engine.connect() as conn:
        conn = conn.execution_options(isolation_level="AUTOCOMMIT")
        conn.exec_driver_sql("VACUUM cleaned")
        conn.exec_driver_sql("CREATE INDEX CONCURRENTLY ix_cleaned ON cleaned (a)")
    with pytest.raises(RuntimeError):
        with connector.write() as conn:
            conn.exec_driver_sql("INSERT INTO cleaned VALUES (1)")
            raise RuntimeError("undo")
    with connector.read() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM cleaned").scalar() == 0
        driver = conn.connection.driver_connection
        assert driver.pgconn.transaction_status == psycopg.pq.TransactionStatus.INTRANS
    assert driver.pgconn.transaction_status == psycopg.pq.TransactionStatus.IDLE
    begin, *rest = _traced(connector, tmp_path / "trace", 1)  # (the default level named
    assert begin.startswith('"BEGIN') and rest == [SELECT_2, COMMIT]  # after the reset)
    assert _round_trips(tmp_path / "trace") == 2  # BEGIN with the SELECT, then COMMIT


def test_the_feed_lock_is_never_held_while_the_server_waits_for_the_client(connector,
                                                                          postgres_url) -> None:
    """A writer cut off after its events' round trip (its machine lost its network) must not
    hold the feed's lock: every other engine's writes with events would wait for it until the
    server ended the session, and their heartbeats behind them. COMMIT goes in that round
    trip, so when the client could next be cut off, the lock is gone."""
    from sqlalchemy import event
    from sqlalchemy.engine import make_url

    admin = make_url(postgres_url).set(drivername="postgresql").render_as_string(
        hide_password=False)
    held: list[int] = []

    def at_commit(conn) -> None:  # the client's COMMIT is about to go out
        with psycopg.connect(admin, autocommit=True) as other:
            held.append(other.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
                "AND classid = %s AND objid = %s",
                (FEED_LOCK >> 32, FEED_LOCK & 0xFFFFFFFF)).fetchone()[0])

    event.listen(connector.engine, "commit", at_commit)
    with connector.write() as conn:
        add_events(conn, [{"submission_id": None, "chain_id": None, "kind": "test",
                           "time": datetime.now(timezone.utc), "data": None}])
    assert held == [0]
    with connector.read() as conn:  # and the events were committed
        assert conn.exec_driver_sql("SELECT count(*) FROM events WHERE kind = 'test'"
                                    ).scalar() == 1
