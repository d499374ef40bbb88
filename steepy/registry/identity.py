"""Which database a connection reaches: the random id its `database_identity' row got when
the database was made (migration 0018). A process whose SQLite file is deleted and then
found again at the same path (restored from a backup, or another database made there since)
compares the ids before it goes on: another database holds none of the chains, runs and
leases the process works on, and its writes there would fail or land in the wrong place."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import Connection

from steepy.registry.tables import database_identity

ANOTHER = ("another database is at its path now, not the one this process opened (it was "
           "deleted and a new one made there?); waiting for the one it opened to be back")


def new_identity(conn: Connection) -> None:
    """Give a database being made its id."""
    conn.execute(database_identity.insert(), [{"id": uuid.uuid4().hex}])


def identity_of(raw: Any) -> str | None:
    """The id of the database a DBAPI connection reaches (None: it has none, made by a
    steepy before migration 0018 and not migrated yet, or it is no steepy database)."""
    cursor = raw.cursor()
    try:
        cursor.execute("SELECT id FROM database_identity")
        row = cursor.fetchone()
    except Exception:  # (no such table)
        return None
    finally:
        cursor.close()
    return None if row is None else str(row[0])
