"""What a PostgreSQL connection sends (read from libpq's trace): a connection lost while idle
in the pool is replaced at its checkout, before the caller's transaction uses it, and a
checkout of a live connection sends the server nothing (SQLAlchemy's pool_pre_ping sent an
empty query each time: a round trip per transaction); a write with events takes the feed's
lock and says NOTIFY in one round trip; a claim reads its chain and the chain's runs so far
in one statement."""

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
    return re.findall(r"\tF\t\d+\t(?:Query|Parse)\t *(.*)", path.read_text())


def test_a_checkout_of_a_live_connection_sends_nothing(connector, tmp_path) -> None:
    _backend(connector)  # one connection, pooled
    sent = _traced(connector, tmp_path / "trace", 5)
    assert sent == ['"BEGIN"', '"SELECT 2"', '"COMMIT"'] * 5


def test_a_connection_idle_longer_than_the_limit_is_pinged(connector, tmp_path,
                                                           monkeypatch) -> None:
    _backend(connector)
    monkeypatch.setattr(database, "IDLE_PING_S", 0.0)
    time.sleep(0.01)
    sent = _traced(connector, tmp_path / "trace", 3)
    # (and the checkout that stops the trace)
    assert sent == ['";"', '"BEGIN"', '"SELECT 2"', '"COMMIT"'] * 3 + ['";"']


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


def test_a_write_with_events_locks_the_feed_and_notifies_in_one_round_trip(connector,
                                                                          tmp_path) -> None:
    def write(connector: Connector) -> None:
        with connector.write() as conn:
            add_events(conn, [{"submission_id": None, "chain_id": None, "kind": "test",
                               "time": datetime.now(timezone.utc), "data": None}])

    _backend(connector)
    sent = _traced(connector, tmp_path / "trace", 2, write)
    assert [q for q in sent if "NOTIFY" in q or "lock" in q] == [
        f'"SELECT pg_advisory_xact_lock({FEED_LOCK}); NOTIFY {CHANNEL}"'] * 2


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
