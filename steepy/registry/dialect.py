"""What differs between SQLite and PostgreSQL, in one place.

Everything else in the registry is written once, in SQLAlchemy Core, for both: only how rows
are locked for a claim and how other processes learn of a commit differ, and they are
answered here (how a value inside stored JSON is read: reads.json_field, for SQL text).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

from sqlalchemy import Connection, Engine, Select


CHANNEL = "steepy_changes"  # PostgreSQL notification channel of every write
FEED_LOCK = 0x57EE9F0ED  # advisory lock held from writing a transaction's events to its commit


class Dialect:
    """The database-specific pieces of the registry, for one engine."""

    def __init__(self, engine: Engine):
        self.name = engine.dialect.name
        self.postgres = self.name == "postgresql"

    def locked(self, query: Select) -> Select:
        """`query` taking row locks that concurrent claimers skip (PostgreSQL); SQLite's
        writers are serialised by the database lock already."""
        return query.with_for_update(skip_locked=True) if self.postgres else query

    def lock_feed(self, conn: Connection, notify: bool = False) -> None:
        """Before a transaction writes its events: wait for every other transaction that has
        written events to commit. Event ids then follow the order of commits, so a reader
        that has seen id N has seen every event committed before (a sequence alone hands out
        ids in the order of inserts). SQLite has one writer at a time already. `notify':
        `after_write`'s NOTIFY goes in the same round trip (it is delivered at the commit,
        wherever the transaction said it)."""
        if not self.postgres:
            return
        # one statement (NOTIFY as pg_notify: a statement less in every write with events)
        lock = (f"SELECT pg_advisory_xact_lock({FEED_LOCK})"
                + (f", pg_notify('{CHANNEL}', '')" if notify else ""))
        driver = conn.connection.driver_connection
        if driver.pgconn.pipeline_status:  # (in a `batch`: queued, answered at its end)
            with driver.cursor() as cursor:
                cursor.execute(lock)
        else:
            conn.exec_driver_sql(lock)

    def commit_in_batch(self, conn: Connection) -> None:
        """In a `batch` (PostgreSQL): COMMIT in the same round trip as what came before, so
        that the feed's lock is never held while the server waits for this client: a client
        cut off between the lock and its COMMIT would hold every other writer's events up
        until the server ended its session (a minute). The caller's own commit then finds
        nothing to do. SQLite: nothing (its commit follows)."""
        if self.postgres:
            conn.connection.driver_connection.cursor().execute("COMMIT")

    def batch(self, conn: Connection) -> Any:
        """A context in which the statements sent through the driver's cursors go to
        PostgreSQL together, answered at its end (psycopg's pipeline mode: one round trip
        for all). Only for statements whose answers nobody reads before the end: a
        SQLAlchemy query in it would find no rows. SQLite: nothing changes."""
        return pipelined(conn.connection.driver_connection, self.postgres)

    def after_write(self, conn: Connection) -> None:
        """Tell every listening process on commit (PostgreSQL's NOTIFY is delivered then)."""
        if self.postgres:
            conn.exec_driver_sql(f"NOTIFY {CHANNEL}")

    @property
    def watches_commits(self) -> bool:
        return self.name in ("sqlite", "postgresql")

    def start_watch(self, raw: Any) -> None:
        """Prepare a connection of its own that `commits_seen` reads."""
        if self.postgres:
            listener = raw.driver_connection
            listener.autocommit = True
            listener.execute(f"LISTEN {CHANNEL}")

    def commits_seen(self, raw: Any, seen_before: int) -> int:
        """A number that changes whenever another connection commits: SQLite's
        data_version, or the count of notifications received (PostgreSQL)."""
        if self.postgres:
            return seen_before + sum(1 for _ in raw.driver_connection.notifies(timeout=0))
        cursor = raw.cursor()
        try:
            cursor.execute("PRAGMA data_version")
            return int(cursor.fetchone()[0])
        finally:
            cursor.close()


def pipelined(driver_connection: Any, postgres: bool) -> Any:
    """psycopg's pipeline on a PostgreSQL driver connection (statements sent in it go
    together, answered at its end); on SQLite a context that changes nothing."""
    return _pipeline(driver_connection) if postgres else nullcontext()


@contextmanager
def _pipeline(driver_connection: Any) -> Iterator[None]:
    """A pipeline that the server's end (a stop, a restart) leaves unfinished leaves its
    connection unusable: nothing can be sent, not even the ROLLBACK SQLAlchemy's pool sends
    when it takes the connection back (which it then logged with a traceback). It is closed
    at once: the error that follows is a lost connection, which SQLAlchemy discards."""
    try:
        with driver_connection.pipeline():
            yield
    except BaseException:
        from psycopg import pq

        if driver_connection.pgconn.pipeline_status != pq.PipelineStatus.OFF:
            driver_connection.close()
        raise
