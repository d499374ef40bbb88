"""Opening the database: SQLite (WAL, `BEGIN IMMEDIATE`) or PostgreSQL, migrated on open."""

from __future__ import annotations

import os
import select
import sqlite3
import time
from pathlib import Path

from sqlalchemy import Connection, Engine, create_engine, event, inspect, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DisconnectionError

from steepy.errors import SteepyError
from steepy.registry.failures import DatabaseUnavailable, describe, masked, opened
from steepy.registry.plainsqlite import BUSY_TIMEOUT_MS, DEFAULT_URL
from steepy.registry.revisions import MIGRATIONS, head_revisions, known_revisions


def _use_wal(cursor, patience_s: float = 30.0) -> None:
    """Switch a database to WAL. On a new file several processes may try at once, and SQLite
    answers the losers "database is locked" at once, without its busy handler: wait here."""
    end = time.monotonic() + patience_s
    while True:
        try:
            if cursor.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > end:
                raise
            time.sleep(0.01)


def _made_private(path: Path) -> None:
    """A new database file, readable by its owner only (SQLite gives its WAL the same mode):
    it holds the workflows, their outputs' paths and the notifications' webhook URLs. One
    that exists keeps its mode (a database shared on purpose)."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass


def _sqlite_engine(url: str) -> Engine:
    path = sqlite_file(url)
    if path is not None:  # (not for a URI: its `file:' is no folder to make)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            _made_private(path)
        except OSError as e:
            raise DatabaseUnavailable(describe(e, url)) from None
    engine = create_engine(url, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000,
                                                "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:
        # We start transactions ourselves (below), so the driver must not.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        _use_wal(cursor)
        cursor.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL survives a killed process
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection) -> None:
        # Writers take the write lock at the start, so read-then-update claims cannot
        # interleave; readers don't, so they never wait for a writer (WAL).
        if connection.get_execution_options().get("read_only"):
            connection.exec_driver_sql("BEGIN")
        else:
            connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


IDLE_PING_S = 10.0  # PostgreSQL: a connection idle in the pool longer than this is pinged
_CHECKED_IN = "steepy.checked_in"  # record.info: when the connection went back to the pool


def _postgres_engine(url: str) -> Engine:
    """PostgreSQL, where a connection lost while idle in the pool is replaced at its checkout,
    before the caller's transaction uses it.

    SQLAlchemy's `pool_pre_ping' sent an empty query at every checkout for that: one of the
    16.5 round trips a chain cost. Instead, a connection is pinged only when it may have been
    lost: its socket has something to read (a server that stops, or ends the backend, sends
    a FATAL message and closes the connection; an idle connection is otherwise sent
    nothing), or it sat in the pool longer than IDLE_PING_S (a firewall may drop one without
    a word). A ping that fails replaces the connection, as SQLAlchemy's pre-ping did.

    A transaction's BEGIN goes in the round trip of its first statement (`pgdriver`)."""
    from steepy.registry import pgdriver

    engine = create_engine(url)

    @event.listens_for(engine, "do_connect")
    def _connect(_dialect, _record, cargs, cparams):
        return pgdriver.connect(*cargs, **cparams)

    @event.listens_for(engine, "begin")
    def _on_begin(conn) -> None:
        conn.connection.driver_connection.begin_lazily()  # BEGIN goes with the first statement

    level_of = engine.dialect.get_isolation_level

    def _isolation_level(dbapi_connection):
        # SQLAlchemy reads the level with a SHOW and, the server having been idle, rolls
        # back what it began: the SHOW's (lazy) BEGIN. The caller's transaction has not
        # begun on the server yet: it begins with its first statement, as it would have.
        pending = getattr(dbapi_connection, "begin_pending", False)
        try:
            return level_of(dbapi_connection)
        finally:
            if pending:
                dbapi_connection.begin_lazily()

    engine.dialect.get_isolation_level = _isolation_level  # type: ignore[method-assign]

    @event.listens_for(engine, "checkin")
    def _on_checkin(_dbapi_connection, record) -> None:
        record.info[_CHECKED_IN] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _on_checkout(dbapi_connection, record, _proxy) -> None:
        if may_be_lost(dbapi_connection, record.info.get(_CHECKED_IN)):
            _ping(dbapi_connection)

    return engine


def may_be_lost(connection, checked_in: float | None) -> bool:
    """Whether a pooled psycopg connection may have been lost since it was checked in (None:
    it is new)."""
    if checked_in is None:
        return False
    if time.monotonic() - checked_in > IDLE_PING_S or connection.closed or connection.broken:
        return True
    poll = select.poll()
    try:
        poll.register(connection.fileno(), select.POLLIN)
    except (OSError, ValueError, connection.Error):
        return True
    return bool(poll.poll(0))


def _ping(connection) -> None:
    """A round trip on the connection; one that fails is a lost connection to SQLAlchemy's
    pool, which replaces it (a new connection that fails too raises the connect's error)."""
    try:
        connection.execute(";")  # an empty query (in autocommit: pgdriver's connections are)
    except connection.Error as e:
        raise DisconnectionError(f"the pooled connection was lost: {e}") from e


def sqlite_file(url: str | None) -> Path | None:
    """The file of an SQLite URL (None: the default); None for another database, one in
    memory, no URL at all, or a URI (`sqlite:///file:x.db?mode=ro&uri=true': SQLite reads
    the file name out of it, so its path cannot be told here)."""
    try:
        parsed = make_url(url or DEFAULT_URL)
    except Exception:  # not a URL: open_engine says so
        return None
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    if parsed.query.get("uri"):  # as the connector tells a URI (it watches no file then)
        return None
    return Path(parsed.database)


def in_memory(url: str) -> bool:
    """Whether `url` is an SQLite database in memory (one per connection, so per thread)."""
    try:
        parsed = make_url(url)
    except Exception:  # not a URL: open_engine says so
        return False
    return parsed.get_backend_name() == "sqlite" and (
        parsed.database in (None, "", ":memory:") or parsed.query.get("mode") == "memory")


def open_engine(url: str | None = None) -> Engine:
    """An engine for `url` (default: SQLite under .steepy/), with the schema up to date."""
    url = url or DEFAULT_URL
    opened(url)
    try:
        backend = make_url(url).get_backend_name()
    except Exception as e:  # sqlalchemy raises ArgumentError for malformed URLs
        raise SteepyError(f"not a database URL: {masked(url)} ({e})") from None
    if backend == "sqlite":
        engine = _sqlite_engine(url)
    elif backend == "postgresql":
        engine = _postgres_engine(url)
    else:
        raise SteepyError(f"unsupported database `{backend}' in {masked(url)}; use "
                          "sqlite:///FILE or postgresql+psycopg://USER@HOST/DB")
    migrate(engine)
    return engine


class NewerDatabase(DatabaseUnavailable):
    """The database was migrated by a newer steepy: this one cannot know its tables."""


def _refuse_newer(url: str, current: set[str]) -> None:
    unknown = current - known_revisions()[0]
    if unknown:
        raise NewerDatabase(
            f"database {masked(url)}: it was migrated by a newer steepy (its schema is at "
            f"revision {', '.join(sorted(unknown))}, which this steepy does not know): "
            "upgrade steepy to use it; going back to an older steepy is not possible")


MIGRATION_LOCK = 0x5173_6570  # PostgreSQL advisory lock key of steepy's migrations ("steepy")


def _current_revisions(connection: Connection) -> set[str]:
    if not inspect(connection).has_table("alembic_version"):
        return set()  # a new database
    return set(connection.execute(text("SELECT version_num FROM alembic_version")).scalars())


def migrate(engine: Engine, replay: bool = False) -> None:
    """Create or upgrade the schema to the newest migration. Many processes may open a new
    database at once: one migrates under a lock (PostgreSQL's advisory lock, SQLite's write
    lock), the others wait for it, then find the schema up to date and go on.

    An empty database gets `tables.py`'s schema and rows at once, marked as migrated to the
    newest revision (0.06 s where replaying every migration takes 0.4 s, at each first start);
    a test holds the two to the same result. `replay' replays the migrations all the same."""
    head = head_revisions()
    with engine.connect() as connection:
        connection.execution_options(read_only=True)  # SQLite: a plain BEGIN, no write lock
        with connection.begin():
            current = _current_revisions(connection)
            if current == head:
                return
    _refuse_newer(engine.url.render_as_string(hide_password=False), current)
    with engine.begin() as connection:  # SQLite: BEGIN IMMEDIATE, i.e. the write lock
        if connection.dialect.name == "postgresql":
            connection.execute(text("SET LOCAL lock_timeout = 0"))  # (as long as it takes)
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        current = _current_revisions(connection)
        if current == head:
            return  # another process migrated while we waited
        if not current and not replay and not inspect(connection).get_table_names():
            _create_newest(connection, head)
            return
        from alembic import command
        from alembic.config import Config as AlembicConfig

        config = AlembicConfig()
        config.set_main_option("script_location", str(MIGRATIONS))
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


def _create_newest(connection: Connection, head: set[str]) -> None:
    """The newest schema in an empty database: the tables, the rows migrations seed, and
    Alembic's version table saying so (as `alembic stamp` writes it)."""
    from steepy.registry.identity import new_identity
    from steepy.registry.tables import SEEDED_ROWS, metadata

    metadata.create_all(connection)
    for table, rows in SEEDED_ROWS:
        connection.execute(table.insert(), rows)
    new_identity(connection)
    connection.execute(text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL, "
                            "CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num))"))
    for revision in sorted(head):
        connection.execute(text("INSERT INTO alembic_version (version_num) VALUES (:v)"),
                           {"v": revision})
