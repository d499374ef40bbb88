"""psycopg 3 connections whose transactions start in the round trip of their first statement.

psycopg sends BEGIN on its own before a transaction's first statement and waits for the
answer: one round trip of the 12-13 a chain cost. Here the connection stays in autocommit at
the driver (psycopg sends no BEGIN) and `begin_lazily` marks a transaction to start: the
next statement goes in one pipeline after an explicit BEGIN, both answered together. COMMIT
and ROLLBACK are psycopg's own (sent when the server says a transaction is open, nothing
otherwise). Only `database._postgres_engine` imports this (psycopg is imported with it).

The caller's `autocommit` (SQLAlchemy's AUTOCOMMIT isolation level, and its reset to the
default level at checkin) is kept apart from the driver's, which stays on: with it asked
for, no transaction is begun (VACUUM, CREATE INDEX CONCURRENTLY run as they must). BEGIN
carries the isolation level, read-only and deferrable settings psycopg's own would.
Two-phase transactions are not supported (steepy has none: SQLAlchemy begins them without
its `begin' event, so their statements would run in autocommit).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

import psycopg
from psycopg import pq

class Connection(psycopg.Connection):
    begin_pending = False  # a transaction has begun for the caller; the server has not seen it
    _wanted_autocommit = False  # the caller's autocommit (the driver's stays on)

    @property
    def autocommit(self) -> bool:  # type: ignore[override]
        return self._wanted_autocommit

    @autocommit.setter
    def autocommit(self, value: bool) -> None:
        self._wanted_autocommit = bool(value)

    def begin_lazily(self) -> None:
        """The next statement runs in a new transaction, with BEGIN sent ahead of it (none
        when the caller asked for autocommit)."""
        self.begin_pending = not self._wanted_autocommit

    @contextmanager
    def start(self, query: Any, params: Any) -> Iterator[None]:
        """Around the first statement of a pending transaction: BEGIN, then the statement,
        in one pipeline answered as one (or in the caller's pipeline, whose queue both
        join). A text of several statements needs the simple protocol, which a pipeline has
        not: BEGIN is then a round trip of its own, as psycopg's."""
        self.begin_pending = False
        if self.pgconn.pipeline_status != pq.PipelineStatus.OFF or (
                not params and _several(query)):
            self.execute(self._get_tx_start_command(), prepare=False)
            yield
            return
        with self.pipeline():
            self.execute(self._get_tx_start_command(), prepare=False)
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


# A process cut off from the server in the middle of a transaction (its network gone, its
# machine frozen) keeps that transaction's locks until the server notices: with the systems'
# defaults, about two hours of TCP keepalive, while other engines wait behind the locks they
# need (the feed's lock stops every write with events). The server ends such a session
# within a minute and notices a silent client within 25 s; the client notices a silent
# server too. (No lock_timeout: a user's change to a submission of 200,000 chains holds its
# rows for seconds, and the writes waiting for them must not fail as an outage.)
SESSION_OPTIONS = ("-c idle_in_transaction_session_timeout=60000 -c tcp_keepalives_idle=10 "
                   "-c tcp_keepalives_interval=5 -c tcp_keepalives_count=3")
# (and what this client sent that the server's machine never acknowledged fails the
# connection after 30 s, where TCP's retransmissions took about 15 minutes: a heartbeat sent
# into a network that fell silent)
KEEPALIVES = {"keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5,
              "keepalives_count": 3, "tcp_user_timeout": 30000}


def connect(*args: Any, **kwargs: Any) -> Connection:
    """A connection for SQLAlchemy's pool (its `do_connect'): autocommit at the driver,
    transactions begun by `begin_lazily', the session's timeouts (`SESSION_OPTIONS`; those
    of the URL's `options` come after them, and win)."""
    kwargs.update(autocommit=True, cursor_factory=Cursor)
    kwargs["options"] = f"{SESSION_OPTIONS} {kwargs.get('options') or ''}".strip()
    for key, value in KEEPALIVES.items():
        kwargs.setdefault(key, value)
    return Connection.connect(*args, **kwargs)
