"""Statements sent to PostgreSQL together: several, and the transaction's BEGIN and COMMIT,
in one round trip (psycopg's pipeline, `Dialect.batch`), their answers read at its end.

An idle worker wakes once per round trip (its send, then a wait for the answer); its looks
every heartbeat were several statements each. SQLAlchemy cannot read rows in a pipeline
(the cursor has no description until the end), so the statements, written in SQLAlchemy
Core as everywhere else, are compiled once for the driver and sent through its cursors.
They must need no parameter processing (times, text, numbers and lists of them: psycopg
takes them as they are) and no expanding `IN` lists. SQLite runs them one by one in one
transaction, as SQLAlchemy statements.
"""

from __future__ import annotations

from typing import Any, Sequence

from sqlalchemy import Connection
from sqlalchemy.sql import Executable

from steepy.registry.connector import Connector

_COMPILED: dict[tuple[int, str], tuple[Executable, Any]] = {}  # (id, dialect) -> compiled


def driver_sql(conn: Connection, statement: Executable, params: dict | None = None
               ) -> tuple[str, dict]:
    """The driver's text of a statement (compiled once per statement object, which must
    live as long as the process: a module's constant) and its parameters."""
    key = (id(statement), conn.dialect.name)
    found = _COMPILED.get(key)
    if found is None or found[0] is not statement:
        compiled = statement.compile(dialect=conn.dialect)
        found = _COMPILED[key] = (statement, compiled)
    compiled = found[1]
    return compiled.string, compiled.construct_params(params or {})


def read_together(db: Connector, queries: Sequence[tuple[Executable, dict]]) -> list[list[Any]]:
    """The rows of each query (attributes named as its columns), read in one read-only
    transaction: on PostgreSQL in one round trip, BEGIN and COMMIT included."""
    with db.read() as conn:
        if not db.dialect.postgres:
            return [conn.execute(query, params).all() for query, params in queries]
        from psycopg.rows import namedtuple_row  # (psycopg: only with PostgreSQL)

        driver = conn.connection.driver_connection
        cursors = []
        with db.dialect.batch(conn):
            for query, params in queries:
                cursor = driver.cursor(row_factory=namedtuple_row)
                cursor.execute(*driver_sql(conn, query, params))
                cursors.append(cursor)
            db.dialect.commit_in_batch(conn)
        return [cursor.fetchall() for cursor in cursors]
