"""The one way into the database: transactions, the write lock, and noticing commits.

Like procrastinate's connector, this is the only object of the registry that holds the
engine (with the SQLite file it watches, dbfile.py, which reads the database's identity
through it); the audiences' SQL implementations ask it for a transaction and never touch a
driver.
"""

from __future__ import annotations

import logging
import os
import threading
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING, Any, Iterator, Protocol

from sqlalchemy import Connection, Engine, event, insert

from steepy.registry.alchemyquery import AlchemyQuery
from steepy.registry.dialect import Dialect
from steepy.registry.plainsqlite import BUSY_TIMEOUT_MS
from steepy.registry.dbfile import DatabaseFile
from steepy.registry.failures import (DatabaseUnavailable, describe, disk_problem,
                                     is_database_failure)
from steepy.registry.bulk import insert_rows
from steepy.registry.records import PENDING_EVENTS
from steepy.registry.tables import events

if TYPE_CHECKING:  # (imported where used: a command that only reads waits for no commit)
    from steepy.registry.wakeups import DirectoryWatch, WakeSource

WAL_RESTART_FRAMES = 16384  # SQLite: a WAL larger than this (64 MB of 4-KB pages) starts over
RESTART_WAIT_MS = 100  # how long such a checkpoint may hold writers back
_AUTOCHECKPOINT = "steepy.wal_autocheckpoint"  # what a pooled connection was told (record.info)
log = logging.getLogger(__name__)
# a timeline row added with its new id, in the order of the rows (when something needs them)
ADD_EVENT_WITH_ID = insert(events).returning(events.c.id, sort_by_parameter_order=True)


class EventWatcher(Protocol):
    """Told of a transaction's events as they are written, in that transaction (the
    outbox of notifications writes its deliveries so)."""

    def wanted(self, rows: list[dict]) -> bool:
        """Whether any of these event rows concerns the watcher."""

    def written(self, conn: Connection, rows: list[dict], ids: list[int]) -> None:
        """The rows were inserted with these ids; the transaction has not committed yet."""


class Connector:
    def __init__(self, engine: Engine):
        self.engine = engine
        self.url = engine.url.render_as_string(hide_password=False)  # for `describe' (masks)
        self.dialect = Dialect(engine)
        self.commits = 0  # write transactions committed through this connector
        self._write_lock = threading.Lock()
        self._watch: Any = None  # a connection of its own that notices commits
        self._directory_watch: DirectoryWatch | None = None  # SQLite: inotify (wakeups.py)
        self._directory_watched = False  # tried once: None then means it cannot be had
        self._seen = 0
        self.watcher: EventWatcher | None = None
        self._own: Connection | None = None  # PostgreSQL: `write(alone=True)`'s (`_apart`)
        event.listen(engine, "commit", self._committed)
        self._own_checkpoints = False  # SQLite: commits leave checkpoints to `checkpoint'
        if self.dialect.name == "sqlite":
            event.listen(engine, "checkout", self._checked_out)
        # SQLite: the file this process opened, and what is wrong with it now (if anything)
        database = engine.url.database if self.dialect.name == "sqlite" else None
        if database in (None, "", ":memory:") or engine.url.query.get("uri"):
            database = None  # in memory, or a URI (`file:...'): nothing to look at
        self.file = os.path.abspath(database) if database else None
        self._watch_stale = False  # the watching connection uses a file no longer there
        self._file = DatabaseFile(self.file, engine, self._reopen) if self.file else None

    def _committed(self, conn: Connection) -> None:
        if not conn.get_execution_options().get("read_only"):
            self.commits += 1

    @contextmanager
    def write(self, notify: bool = True, alone: bool = False) -> Iterator[Connection]:
        """A write transaction. Threads of this process queue on a lock of their own: waiting
        in SQLite's busy handler would sleep in steps of milliseconds. Without `notify`, the
        other processes are not woken for it (PostgreSQL) unless it writes events: a
        heartbeat, which nobody waits for, would wake every worker of a cluster. `alone`
        (PostgreSQL): not behind this process's other writes, for a heartbeat, which must
        commit on time while a long write of this process runs (SQLite has one writer)."""
        self.check_file()
        apart = alone and self.dialect.postgres
        try:
            with (nullcontext() if apart else self._write_lock), \
                    (self._apart() if apart else self.engine.begin()) as conn:
                pending: list[dict] = []
                conn.info[PENDING_EVENTS] = pending
                try:
                    yield conn
                    self._still_connected(conn)
                    if pending:  # last, under the feed's lock: ids in the order of commits
                        watcher = self.watcher
                        if watcher is not None and watcher.wanted(pending):
                            self.dialect.lock_feed(conn, notify=True)  # (one round trip)
                            ids = list(conn.execute(ADD_EVENT_WITH_ID, pending).scalars())
                            watcher.written(conn, pending, ids)
                        else:
                            with self.dialect.batch(conn):  # one round trip, commit too
                                self.dialect.lock_feed(conn, notify=True)
                                insert_rows(conn, events, pending)
                                self.dialect.commit_in_batch(conn)
                    elif notify:
                        self.dialect.after_write(conn)
                finally:
                    if not conn.invalidated:  # (a lost connection's info goes with it, and
                        del conn.info[PENDING_EVENTS]  # touching it would hide why it was lost)
        except Exception as e:
            self._noticed(e)
            raise

    @contextmanager
    def _apart(self) -> Iterator[Connection]:
        """(PostgreSQL) A transaction on a connection of its own, kept for `write(alone=True)`:
        the heartbeat must not wait for the pool either, which the process's other reads and
        writes may hold whole. One thread at a time uses it (the heartbeat's)."""
        if self._own is None or self._own.closed:
            self._own = self.engine.connect()
        with self._own.begin():
            yield self._own

    def cancel_apart(self) -> None:
        """(PostgreSQL) Ask the server to cancel what the connection of `write(alone=True)`
        runs, from any thread: a heartbeat that hangs must not commit after its engine
        stopped. Asking connects to the server: in a daemon thread, for at most 10 s (a
        network that fell silent must hold the caller up no more than the hung beat)."""
        own = self._own
        raw = None if own is None or own.closed or own.invalidated else own.connection
        driver = None if raw is None else raw.driver_connection
        if driver is None:
            return

        def cancel() -> None:
            try:
                if hasattr(driver, "cancel_safe"):  # (psycopg 3.2 with libpq 17 on)
                    driver.cancel_safe(timeout=10)
                else:
                    driver.cancel()
            except Exception as e:  # noqa: BLE001 - best effort: said, and the engine goes on
                log.warning("could not cancel the heartbeat under way: %s", e)

        threading.Thread(target=cancel, name="cancel-heartbeat", daemon=True).start()

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A read-only transaction: a consistent snapshot without the write lock."""
        self.check_file()
        try:
            with self.engine.connect() as conn:
                conn.execution_options(read_only=True)
                with conn.begin():
                    yield conn
                    self._still_connected(conn)
        except Exception as e:
            self._noticed(e)
            raise

    @contextmanager
    def reading(self) -> Iterator[AlchemyQuery]:
        """read(), for SQL text (steepy/registry/reads.py)."""
        with self.read() as conn:
            yield AlchemyQuery(conn)

    def _still_connected(self, conn: Connection) -> None:
        """At the end of a transaction whose body caught the error of its lost connection:
        that it cannot end, as the database failure it is (ending it would raise SQLAlchemy's
        PendingRollbackError, which is no database failure: an engine stopped on it once)."""
        if conn.invalidated:
            raise DatabaseUnavailable(describe(
                ConnectionError("the connection to it was lost"),
                self.engine.url.render_as_string(hide_password=True)))

    # -- checkpoints (SQLite) ------------------------------------------------------------------

    def take_over_checkpoints(self) -> bool:
        """SQLite: from now on this process's commits leave the WAL's checkpoints to
        `checkpoint`, called off their path (a busy engine does, from a thread of its own),
        instead of the commit that passes 1,000 pages copying them and syncing the file: that
        cost an engine's hot path a third of a millisecond per commit. False elsewhere."""
        self._own_checkpoints = self.dialect.name == "sqlite"
        return self._own_checkpoints

    def hand_back_checkpoints(self) -> None:
        """Commits checkpoint by themselves again (SQLite's default)."""
        self._own_checkpoints = False

    def _checked_out(self, dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        # each connection is told at its checkout when who checkpoints has changed (pooled
        # connections stay pooled: replacing the pool left connections open until the GC)
        want = 0 if self._own_checkpoints else 1000
        if record.info.get(_AUTOCHECKPOINT) != want:
            dbapi_connection.execute(f"PRAGMA wal_autocheckpoint={want}")
            record.info[_AUTOCHECKPOINT] = want

    def checkpoint(self, last: bool = False) -> None:
        """Copy what the WAL holds into the database file as far as readers allow, without
        waiting for them or for writers (SQLite's PASSIVE checkpoint).

        The WAL starts over only when a writer finds every frame copied, which a busy engine
        (a commit every few milliseconds) almost never lets a passive checkpoint finish first:
        the file grew by 85 MB per 1,000 chains. So once it holds more than WAL_RESTART_FRAMES,
        a RESTART checkpoint makes the next writer start it over. That one holds writers back
        while it copies the rest and waits for readers, for RESTART_WAIT_MS at most (then it
        copies what it can, as a passive one). The `last` one, as this process closes the
        database, also cuts the WAL file to nothing (TRUNCATE). Never into a file that is
        gone or overwritten (looked at first, every time)."""
        self.check_file(now=True)
        raw = self.engine.raw_connection()
        try:
            cursor = raw.cursor()
            _, frames, _ = cursor.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            if last or frames > WAL_RESTART_FRAMES:
                cursor.execute(f"PRAGMA busy_timeout={RESTART_WAIT_MS}")
                try:
                    mode = "TRUNCATE" if last else "RESTART"
                    cursor.execute(f"PRAGMA wal_checkpoint({mode})").fetchall()
                finally:
                    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        finally:
            raw.close()

    def change_marker(self) -> int | None:
        """A number that changes whenever another connection commits, so a process can notice
        new work at once. None where the database offers no way to tell."""
        if not self.dialect.watches_commits:
            return None
        self.check_file()
        if self._watch_stale:
            self._watch_stale = False
            self.forget_watch()
        if self._watch is None:  # kept for the life of the connector
            self._watch = self.engine.raw_connection()
            self.dialect.start_watch(self._watch)
        self._seen = self.dialect.commits_seen(self._watch, self._seen)
        return self._seen

    def wake_source(self) -> WakeSource | None:
        """What becomes readable when another process may have committed
        (steepy.registry.wakeups), or None: then the marker is looked at on a timer. On
        PostgreSQL the listening connection's socket (once `change_marker` opened it)."""
        from steepy.registry.wakeups import SocketSource, watch_directory

        if self.dialect.postgres:
            try:
                return None if self._watch is None \
                    else SocketSource(self._watch.driver_connection.fileno())
            except Exception:  # noqa: BLE001 - a broken connection: the timer covers
                return None
        if self.file is None or not self.dialect.watches_commits:
            return None
        if not self._directory_watched:
            self._directory_watched = True
            self._directory_watch = watch_directory(os.path.dirname(self.file))
        return self._directory_watch

    def close(self) -> None:
        """Close this process's connections (the watching one too). On SQLite, what the WAL
        holds is copied into the database file first and the WAL cut to nothing, so the file
        alone is whole even while other connections (another process's) keep the WAL open."""
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.close()
        own, self._own = self._own, None
        if own is not None:
            own.close()
        directory, self._directory_watch = self._directory_watch, None
        if directory is not None:
            directory.close()
        try:
            if self.dialect.name == "sqlite" and (self._file is None
                                                  or self._file.problem is None):
                self.checkpoint(last=True)
        finally:
            self.engine.dispose()

    def forget_watch(self) -> None:
        """Drop the watching connection (it failed); the next change_marker opens another."""
        watch, self._watch = self._watch, None
        if watch is not None:
            try:
                watch.invalidate()
            except Exception:  # noqa: BLE001 - it is broken already
                pass

    # -- the file (SQLite: dbfile.py) -----------------------------------------------------------

    @property
    def put_back(self) -> bool:
        """SQLite: our file went away and was put back (identity.py)."""
        return self._file is not None and self._file.put_back

    def check_file(self, now: bool = False) -> None:
        """SQLite: raise DatabaseUnavailable when the database file this process opened is
        gone, empty, corrupted or holds another database (DatabaseFile.check)."""
        if self._file is not None:
            self._file.check(now)

    def _noticed(self, error: BaseException) -> None:
        if self._file is not None:
            self._file.noticed(error)

    def file_problem(self) -> str | None:
        """What is wrong with the SQLite file now (see `check_file`), or None."""
        return None if self._file is None else self._file.problem_now()

    def problem(self) -> str | None:
        """Why the database cannot be used now, in one line without a password, or None:
        what `check_file` finds, a disk that is full or read-only (SQLite), or the error of
        a statement that reads nothing."""
        if self.file is not None:
            problem = self.file_problem()
            if problem is not None:
                return f"database {self.file}: {problem}"
            problem = disk_problem(self.url)
            if problem is not None:
                return f"database {self.file}: {problem}"
        try:
            with self.read() as conn:
                conn.exec_driver_sql("SELECT 1").scalar()
        except Exception as e:
            if not is_database_failure(e):
                raise
            return describe(e, self.url)
        return None

    def _reopen(self) -> None:
        self._watch_stale = True  # dropped by the thread that uses it (`change_marker')
        self.engine.dispose()

