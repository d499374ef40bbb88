"""The workflow catch's `maxRecoveries' (extensions 10), counted in the database.

A recovery is one run of the catch: the row of its attempt 1. The limit holds across every
run of every chain of the submission: chain retries (`retries.processChains'), `steepy
retry', other engines and restarts, since the rows are what counts. Before a catch runs, its
agent claims a recovery: in one write transaction the rows are counted and, if one is left,
the catch's attempt 1 is written (as RUNNING; the attempt then stores itself over it). On
PostgreSQL the submission's row is locked for it, on SQLite the write lock serialises it, so
two catches that fail at once cannot both take the last one.
"""

from __future__ import annotations

import threading

from sqlalchemy import Connection, func, insert, select

from steepy.model.attempt import AttemptRecord
from steepy.model.stopping import CATCH_SUFFIX
from steepy.registry.connector import Connector
from steepy.registry.records import load
from steepy.registry.tables import attempts, process_chains, submissions

_UNKNOWN = object()
_KEPT = 10_000  # limits of this many submissions are kept at most


class Recoveries:
    """Claims of recoveries; the limit of each submission is read once (it never changes)."""

    def __init__(self, db: Connector):
        self.db = db
        self._limits: dict[str, int | None] = {}
        self._lock = threading.Lock()

    def claim(self, submission_id: str, chain_id: str, run_number: int,
              first: AttemptRecord) -> bool:
        """Whether the catch may run, as attempt `first' of run `run_number' of the chain;
        if so, that attempt is stored at once."""
        with self.db.write() as conn:
            limit = self._limit(conn, submission_id)
            if limit is None:
                return True
            conn.execute(select(submissions.c.id).where(submissions.c.id == submission_id)
                         .with_for_update())
            if used(conn, submission_id) >= limit:
                return False
            conn.execute(insert(attempts).values(**first.to_row(), chain_id=chain_id,
                                                 run_number=run_number))
            return True

    def _limit(self, conn: Connection, submission_id: str) -> int | None:
        with self._lock:
            limit = self._limits.get(submission_id, _UNKNOWN)
        if limit is _UNKNOWN:
            workflow = load(conn.execute(select(submissions.c.workflow).where(
                submissions.c.id == submission_id)).scalar()) or {}
            limit = (workflow.get("catch") or {}).get("maxRecoveries")
            with self._lock:
                if len(self._limits) >= _KEPT:
                    self._limits.clear()
                self._limits[submission_id] = limit
        return limit  # type: ignore[return-value]


def used(conn: Connection, submission_id: str) -> int:
    """How many times the catch ran in the submission so far (runs that began)."""
    return conn.execute(
        select(func.count()).select_from(attempts)
        .join(process_chains, process_chains.c.id == attempts.c.chain_id)
        .where(process_chains.c.submission_id == submission_id,
               attempts.c.fallback_for.is_not(None), attempts.c.attempt == 1,
               attempts.c.executable_id.like(f"%{CATCH_SUFFIX}"))).scalar_one()
