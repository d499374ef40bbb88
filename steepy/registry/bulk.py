"""Many new rows of one table at once, in the driver's terms on SQLite.

Storing 10,000 chains writes 10,000 chain rows and 20,000 events. Through SQLAlchemy Core each
row's parameters are built and each time value is processed one by one: 0.13-0.16 s for
20,000 events, where the driver's `executemany` takes 0.05 s (measured on SQLite). On
SQLite the rows therefore go to the DBAPI cursor, with the values as SQLAlchemy stores them
(times as `YYYY-MM-DD HH:MM:SS.ffffff`, a column's scalar default where a row leaves it out).
On PostgreSQL they are one statement, whatever their number: `INSERT ... SELECT` from
`unnest` of one array per column, in the rows' order (their ids follow it). SQLAlchemy's
executemany sent a statement per row (3 events per chain, 30,000 statements to store 10,000
chains), and a multi-row `INSERT ... VALUES` is a new text, so a new plan, for each number
of rows; this text is the same for every call with the same columns, which psycopg prepares.
tests/registry/test_bulk.py reads back what this writes, beside the same rows written through
SQLAlchemy.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Sequence

from sqlalchemy import Connection, DateTime, Table

SQLITE_TIME = "%Y-%m-%d %H:%M:%S.%f"  # how SQLAlchemy stores a time on SQLite


def sqlite_time(value: datetime | None) -> str | None:
    """A time as SQLAlchemy stores it on SQLite."""
    return None if value is None else value.strftime(SQLITE_TIME)


def insert_rows(conn: Connection, table: Table, rows: Sequence[dict[str, Any]]) -> None:
    """Insert these rows (each with the same keys, column names) into `table`, in the
    transaction `conn' is in. Nothing is returned (no new ids)."""
    if not rows:
        return
    given = list(rows[0])
    defaults = {c.name: c.default.arg for c in table.columns
                if c.name not in rows[0] and c.default is not None and c.default.is_scalar}
    if conn.dialect.name != "sqlite":
        _unnested(conn, table, given, defaults, rows)
        return
    names = given + list(defaults)
    times = {i for i, name in enumerate(given) if isinstance(table.c[name].type, DateTime)}
    text = (f"INSERT INTO {table.name} ({', '.join(names)}) "
            f"VALUES ({', '.join('?' * len(names))})")
    extra = list(defaults.values())
    values = [[row[name] for name in given] + extra for row in rows]
    if times:
        # (the rows of one write mostly share a time; by its offset too: equal instants in
        # two zones are two wall clocks, as SQLAlchemy writes them)
        formatted: dict[tuple[datetime, Any], str] = {}
        for row_values in values:
            for i in times:
                moment = row_values[i]
                if moment is not None:
                    key = (moment, moment.utcoffset())
                    shown = formatted.get(key)
                    if shown is None:
                        shown = formatted[key] = moment.strftime(SQLITE_TIME)
                    row_values[i] = shown
    cursor = conn.connection.cursor()
    try:
        cursor.executemany(text, values)
    finally:
        cursor.close()


def _unnested(conn: Connection, table: Table, given: list[str], defaults: dict[str, Any],
              rows: Sequence[dict[str, Any]]) -> None:
    """(PostgreSQL) The rows as one `INSERT ... SELECT` from one array per column, in their
    order (WITH ORDINALITY: a serial column numbers them in it). The arrays go in binary:
    as text, psycopg escapes each element in Python (10,000 chains' JSON: 0.24 s, 0.03 s in
    binary, 0.11 s as ten 1,000-row `VALUES`)."""
    names = given + list(defaults)
    types = [table.c[name].type.compile(dialect=conn.dialect) for name in names]
    columns = ", ".join(names)
    arrays = ", ".join(f"%b::{kind}[]" for kind in types)  # (binary: no escaping)
    text = (f"INSERT INTO {table.name} ({columns}) SELECT {columns} FROM unnest({arrays}) "
            f"WITH ORDINALITY AS given ({columns}, place) ORDER BY place")
    values = [[row[name] for row in rows] for name in given]
    values += [[value] * len(rows) for value in defaults.values()]
    with conn.connection.driver_connection.cursor() as cursor:  # (in a pipeline too)
        cursor.execute(text, values)
