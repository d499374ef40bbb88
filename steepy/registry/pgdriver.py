"""psycopg 3 connections whose transactions start in the round trip of their first statement.

psycopg sends BEGIN on its own before a transaction's first statement and waits for the
answer: one round trip of the 12-13 a chain cost. Here the connection stays in autocommit at
the driver (psycopg sends no BEGIN) and `begin_lazily` marks a transaction to start: the
next statement goes in one pipeline after an explicit BEGIN, both answered together. COMMIT
and ROLLBACK are psycopg's own (sent when the server says a transaction is open, nothing
otherwise). Only `database._postgres_engine` imports this (psycopg is imported with it).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

import psycopg
from psycopg import pq

_BEGIN = b"BEGIN"


class Connection(psycopg.Connection):
    begin_pending = False  # a transaction has begun for the caller; the server has not seen it

    def begin_lazily(self) -> None:
        """The next statement runs in a new transaction, with BEGIN sent ahead of it."""
        self.begin_pending = True

    @contextmanager
    def start(self, query: Any, params: Any) -> Iterator[None]:
        """Around the first statement of a pending transaction: BEGIN, then the statement,
        in one pipeline answered as one (or in the caller's pipeline, whose queue both
        join). A text of several statements needs the simple protocol, which a pipeline has
        not: BEGIN is then a round trip of its own, as psycopg's."""
        self.begin_pending = False
        if self.pgconn.pipeline_status != pq.PipelineStatus.OFF or (
                not params and _several(query)):
            self.execute(_BEGIN, prepare=False)
            yield
            return
        with self.pipeline():
            self.execute(_BEGIN, prepare=False)
            yield

    def commit(self) -> None:
        self.begin_pending = False
        super().commit()

    def rollback(self) -> None:
        self.begin_pending = False
        super().rollback()


class Cursor(psycopg.Cursor):
    def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
        conn = self.connection
        if not getattr(conn, "begin_pending", False):
            return super().execute(query, params, **kwargs)
        with conn.start(query, params):
            return super().execute(query, params, **kwargs)

    def executemany(self, query: Any, params_seq: Any, **kwargs: Any) -> None:
        conn = self.connection
        if not getattr(conn, "begin_pending", False):
            return super().executemany(query, params_seq, **kwargs)
        params_seq = list(params_seq)
        with conn.start(query, params_seq):
            return super().executemany(query, params_seq, **kwargs)


def _several(query: Any) -> bool:
    """Whether a query's text may hold more than one statement (a `;' anywhere)."""
    text = query if isinstance(query, (str, bytes)) else None
    if text is None:
        return True  # composed SQL: assume it may
    return (b";" if isinstance(text, bytes) else ";") in text


def connect(*args: Any, **kwargs: Any) -> Connection:
    """A connection for SQLAlchemy's pool (its `do_connect'): autocommit at the driver,
    transactions begun by `begin_lazily'."""
    kwargs.update(autocommit=True, cursor_factory=Cursor)
    return Connection.connect(*args, **kwargs)
