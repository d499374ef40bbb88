"""Which database a process works in: the SQLite file at its path (by `stat`: is it still
there, the same file?) and the random id its `database_identity' row got when the database
was made (migration 0018). A process whose SQLite file is deleted and then found again at the
same path (restored from a backup, or another database made there since) compares the ids
before it goes on: another database holds none of the chains, runs and leases the process
works on, and its writes there would fail or land in the wrong place."""

from __future__ import annotations

import os
import uuid
from typing import Any

from sqlalchemy import Connection, Engine

from steepy.registry.tables import database_identity

ANOTHER = ("another database is at its path now, not the one this process opened (it was "
           "deleted and a new one made there?); waiting for the one it opened to be back")


def new_identity(conn: Connection) -> None:
    """Give a database being made its id."""
    conn.execute(database_identity.insert(), [{"id": uuid.uuid4().hex}])


def identity_of(raw: Any) -> str | None:
    """The id of the database a DBAPI connection reaches; None for a database made by a
    steepy before migration 0018 and not migrated yet (its `alembic_version' says so).
    Raises what keeps it from being read (a lock; a file half copied into place, which may
    look like a database without the table), for the caller to look again."""
    cursor = raw.cursor()
    try:
        try:
            cursor.execute("SELECT id FROM database_identity")
            row = cursor.fetchone()
        except Exception as e:
            if "no such table" not in str(e) and "does not exist" not in str(e):
                raise
            cursor.execute("SELECT max(version_num) FROM alembic_version")
            version = cursor.fetchone()[0]
            if version is None or version >= _FIRST_WITH_ID:
                raise LookupError("it holds no database id yet") from None
            return None
    finally:
        cursor.close()
    return None if row is None else str(row[0])


_FIRST_WITH_ID = "0018"  # the migration that gives a database its id


def read_identity(engine: Engine) -> str | None:
    """The id of the database `engine` opens now."""
    raw = engine.raw_connection()
    try:
        return identity_of(raw)
    finally:
        raw.close()


def file_state(path: str) -> tuple[str | None, tuple[int, int] | None, Any]:
    """What is wrong with the database file at `path' (None: nothing seen), which file it is
    (device, inode), and its state (it changes when the file is written).

    Only `stat': opening the file, even to read a byte, and closing it again would release
    every POSIX lock SQLite holds on it in this process (they belong to the process, and any
    close of the file drops them), and another process could then take the WAL away from
    under our connections. Whether the bytes are a database, SQLite says as it reads them
    (`DatabaseFile.noticed`, dbfile.py)."""
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return "its file is gone (deleted or moved away)", None, None
    except OSError as e:
        return f"its file cannot be reached ({e.strerror})", None, None
    found = (stat.st_dev, stat.st_ino)
    state = (found, stat.st_size, stat.st_mtime_ns)
    if stat.st_size == 0:
        return "its file is empty", found, state
    return None, found, state


def older_copy(db: Any, error: BaseException) -> Any:
    """A write that broke the database's own rules (a foreign key, a unique id) once the
    file of `db' (a Connector) was put back: the copy is older than this process's own
    writes (a backup taken before them) and lacks the runs it claimed. A DatabaseUnavailable
    that says so, not a bug (None for any other error)."""
    from steepy.registry.failures import DatabaseUnavailable, driver_words, is_integrity_error

    if not getattr(db, "put_back", False) or not is_integrity_error(error):
        return None
    return DatabaseUnavailable(
        f"database {db.file}: the file put back is older than this process's own writes (a "
        f"copy taken before them: {driver_words(error)}); this engine stops and ends its "
        "tools, and the work goes on from the copy's state when an engine starts again")
