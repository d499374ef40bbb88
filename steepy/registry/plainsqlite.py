"""SQLite through Python's own sqlite3 module, without SQLAlchemy: how a time is stored, the
connection's settings, and read transactions for SQL text (steepy/registry/reads.py) that
give rows as SQLAlchemy's do (quick.py: the commands that only read)."""

from __future__ import annotations

import sqlite3
from collections import namedtuple
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Callable, Iterator, Sequence

from steepy.registry.failures import DatabaseUnavailable, describe

DEFAULT_URL = "sqlite:///.steepy/steepy.db"  # the database where none is named
BUSY_TIMEOUT_MS = 30_000  # how long an SQLite connection waits for a lock before it fails
SQLITE_TIME = "%Y-%m-%d %H:%M:%S.%f"  # how SQLAlchemy stores a time on SQLite


def sqlite_time(value: datetime | None) -> str | None:
    """A time as SQLAlchemy stores it on SQLite."""
    return None if value is None else value.strftime(SQLITE_TIME)


def _stored_time(value: Any) -> datetime | None:
    """A stored time read back (naive, in UTC), as SQLAlchemy's SQLite dialect reads it."""
    return None if value is None else datetime.fromisoformat(value)


def _flag(value: Any) -> bool | None:
    return None if value is None else bool(value)


_ROWS: dict[tuple[str, ...], Any] = {}  # column names -> their row class


def _row_class(names: tuple[str, ...]) -> Any:
    found = _ROWS.get(names)
    if found is None:
        found = _ROWS[names] = namedtuple("Row", names)  # type: ignore[misc]
    return found


class PlainQuery:
    """steepy.registry.reads.Query over an sqlite3 connection in a read transaction."""

    dialect = "sqlite"

    def __init__(self, connection: sqlite3.Connection):
        self.connection = connection

    def rows(self, sql: str, params: dict[str, Any], times: Sequence[str] = (),
             flags: Sequence[str] = ()) -> list[Any]:
        cursor = self.connection.execute(sql, params)
        names = tuple(c[0] for c in cursor.description)
        make = _row_class(names)
        convert: list[tuple[int, Callable[[Any], Any]]] = (
            [(names.index(n), _stored_time) for n in times]
            + [(names.index(n), _flag) for n in flags])
        if not convert:
            return [make._make(r) for r in cursor]
        found = []
        for raw in cursor:
            values = list(raw)
            for index, function in convert:
                values[index] = function(values[index])
            found.append(make._make(values))
        return found

    @staticmethod
    def time(value: datetime) -> Any:
        return sqlite_time(value)


class PlainReader:
    """steepy.registry.reads.Reader over one sqlite3 connection: each reading is a read
    transaction (BEGIN; WAL: a snapshot, without the write lock)."""

    def __init__(self, connection: sqlite3.Connection, url: str):
        self.connection = connection
        self.url = url

    @contextmanager
    def reading(self) -> Iterator[PlainQuery]:
        try:
            self.connection.execute("BEGIN")
            try:
                yield PlainQuery(self.connection)
            finally:
                self.connection.execute("ROLLBACK")  # (nothing was written)
        except sqlite3.Error as e:  # said as the registry says a database failure
            raise DatabaseUnavailable(describe(e, self.url)) from None
