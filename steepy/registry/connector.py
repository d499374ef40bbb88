"""The one way into the database: transactions, the write lock, and noticing commits.

Like procrastinate's connector, this is the only object of the registry that holds the
engine; the audiences' SQL implementations ask it for a transaction and never touch a driver.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Iterator, Protocol

from sqlalchemy import Connection, Engine, event

from steepy.registry.dialect import BUSY_TIMEOUT_MS, Dialect
from steepy.registry.records import ADD_EVENT, ADD_EVENT_WITH_ID, PENDING_EVENTS

WAL_RESTART_FRAMES = 16384  # SQLite: a WAL larger than this (64 MB of 4-KB pages) starts over
RESTART_WAIT_MS = 100  # how long such a checkpoint may hold writers back
_AUTOCHECKPOINT = "steepy.wal_autocheckpoint"  # what a pooled connection was told (record.info)


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
        self.dialect = Dialect(engine)
        self.commits = 0  # write transactions committed through this connector
        self._write_lock = threading.Lock()
        self._watch: Any = None  # a connection of its own that notices commits
        self._seen = 0
        self.watcher: EventWatcher | None = None
        event.listen(engine, "commit", self._committed)
        self._own_checkpoints = False  # SQLite: commits leave checkpoints to `checkpoint'
        if self.dialect.name == "sqlite":
            event.listen(engine, "checkout", self._checked_out)

    def _committed(self, conn: Connection) -> None:
        if not conn.get_execution_options().get("read_only"):
            self.commits += 1

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """A write transaction. Threads of this process queue on a lock of their own: waiting
        in SQLite's busy handler would sleep in steps of milliseconds."""
        with self._write_lock, self.engine.begin() as conn:
            pending: list[dict] = []
            conn.info[PENDING_EVENTS] = pending
            try:
                yield conn
                if pending:  # last, under the feed's lock: ids in the order of commits
                    self.dialect.lock_feed(conn)
                    watcher = self.watcher
                    if watcher is not None and watcher.wanted(pending):
                        ids = list(conn.execute(ADD_EVENT_WITH_ID, pending).scalars())
                        watcher.written(conn, pending, ids)
                    else:
                        conn.execute(ADD_EVENT, pending)
                self.dialect.after_write(conn)
            finally:
                del conn.info[PENDING_EVENTS]

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A read-only transaction: a consistent snapshot without the write lock."""
        with self.engine.connect() as conn:
            conn.execution_options(read_only=True)
            with conn.begin():
                yield conn

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
        database, also cuts the WAL file to nothing (TRUNCATE)."""
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
        if self._watch is None:  # kept for the life of the connector
            self._watch = self.engine.raw_connection()
            self.dialect.start_watch(self._watch)
        self._seen = self.dialect.commits_seen(self._watch, self._seen)
        return self._seen

    def close(self) -> None:
        """Close this process's connections (the watching one too). On SQLite, what the WAL
        holds is copied into the database file first and the WAL cut to nothing, so the file
        alone is whole even while other connections (another process's) keep the WAL open."""
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.close()
        if self.dialect.name == "sqlite":
            self.checkpoint(last=True)
        self.engine.dispose()

    def forget_watch(self) -> None:
        """Drop the watching connection (it failed); the next change_marker opens another."""
        watch, self._watch = self._watch, None
        if watch is not None:
            try:
                watch.invalidate()
            except Exception:  # noqa: BLE001 - it is broken already
                pass
