"""The scheduler's hot path in the driver's own terms: the statements that claim chains and
record the ends of runs, a few per chain, sent to the DBAPI cursor of the transaction that
`Connector.write` opened.

Measured (SQLite, an end and a claim per transaction): through SQLAlchemy Core 1.7 ms of CPU,
through the driver 0.3 ms. SQLAlchemy's statement layer (compiled-cache lookups, parameter
processing, result objects) is built for statements of every shape; these few have one shape
each, written here for SQLite (`?`) and psycopg (`%s`), with the values as SQLAlchemy stores
them (SQLite: times as `YYYY-MM-DD HH:MM:SS.ffffff` in UTC). Everything else, and every read
elsewhere, stays with SQLAlchemy; tests/registry/test_store.py reads back what this writes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable, Iterable, Sequence

from sqlalchemy import Connection

from steepy.model.attempt import AGENT_LOST, INTERRUPTED
from steepy.model.attempt import REQUEUED as REQUEUED_RUN
from steepy.model.submission import ProcessChainStatus as CS
from steepy.registry.plainsqlite import sqlite_time
from steepy.registry.dialect import pipelined
from steepy.registry.records import dump

CLAIM_WINDOW = 64  # REGISTERED chains looked at per claim when capabilities must be matched
_ATTEMPT_KEY = ("chain_id", "run_number", "ordinal")
_ATTEMPT_COLUMNS = _ATTEMPT_KEY + (
    "executable_id", "service_id", "attempt", "start_time", "end_time", "outcome", "exit_code",
    "signal", "timeout_kind", "delay_ms", "delay_rule", "message", "last_lines", "fallback_for",
    "due_time", "host", "executor_pid", "executor_started", "pgid", "requeued_by")
_TIMES = {"start_time", "end_time", "due_time"}


class HotPath:
    def __init__(self, postgres: bool):
        self.postgres = postgres
        candidates = ("SELECT id, required_capabilities FROM process_chains WHERE status = ?{} "
                      "ORDER BY priority DESC, seq LIMIT " + str(CLAIM_WINDOW)
                      + (" FOR UPDATE SKIP LOCKED" if postgres else ""))
        self._candidates = self._sql(candidates.format(""))
        self._candidates_text = candidates
        self._candidates_of: dict[int, str] = {}  # those of n submissions, made when needed
        self._set_running = self._sql(
            "UPDATE process_chains SET status = ?, next_run_at = NULL, waiting = NULL, "
            "progress = NULL WHERE id = ?")
        # the chain's next run: its number one after the last (in the transaction that
        # holds the chain's row, so nobody else adds one meanwhile)
        self._add_next_run = self._sql(
            "INSERT INTO runs (chain_id, run_number, agent_id, start_time) "
            "SELECT ?, coalesce(max(run_number), 0) + 1, ?, ? FROM runs WHERE chain_id = ?")
        # an end counts only for a run still open, of a chain still RUNNING that run (another
        # engine may have counted its agent lost, closed the run and given the chain to
        # another agent meanwhile: what comes late from the first is not recorded)
        self._end_run = self._sql(
            "UPDATE runs SET end_time = ?, status = ?, error_message = ?, auto_resume_after = ? "
            "WHERE chain_id = ? AND run_number = ? AND end_time IS NULL")
        # an attempt's row is written when it starts and again as it goes on (its key is its
        # place in its run); rows without a place (older callers) are only ever inserted
        self._put_attempt = self._sql(
            f"INSERT INTO attempts ({', '.join(_ATTEMPT_COLUMNS)}) "
            f"VALUES ({', '.join('?' * len(_ATTEMPT_COLUMNS))}) "
            f"ON CONFLICT ({', '.join(_ATTEMPT_KEY)}) DO UPDATE SET " + ", ".join(
                f"{c} = excluded.{c}" for c in _ATTEMPT_COLUMNS if c not in _ATTEMPT_KEY))
        self._set_ended = self._sql(
            "UPDATE process_chains SET status = ?, results = ?, next_run_at = ? WHERE id = ? "
            "AND status = ? AND (SELECT max(run_number) FROM runs WHERE chain_id = ?) = ?")
        self._open_runs_text = ("SELECT chain_id, run_number FROM runs WHERE end_time IS NULL "
                                "AND chain_id IN ({})" + (" FOR UPDATE" if postgres else ""))

    def _sql(self, text: str) -> str:
        return text.replace("?", "%s") if self.postgres else text

    def time(self, value: datetime | None) -> Any:
        """A time as the column stores it (SQLAlchemy's format on SQLite)."""
        return value if self.postgres else sqlite_time(value)

    def batch(self, cur: Any) -> Any:
        """PostgreSQL: the statements sent in this context go together, answered at its end
        (psycopg's pipeline: one round trip where each took one). SQLite: nothing changes."""
        return pipelined(cur.connection, self.postgres)

    @staticmethod
    def cursor(conn: Connection) -> Any:
        """The driver's cursor, in the transaction `conn' is in."""
        return conn.connection.cursor()

    def candidates(self, cur: Any, only: frozenset[str] | None) -> Any:
        """(id, required capabilities) of REGISTERED chains in the order they are due (with
        `only', of those submissions); the cursor, to fetch as far as needed."""
        if only is None:
            cur.execute(self._candidates, (str(CS.REGISTERED),))
            return cur
        ids = sorted(only)
        statement = self._candidates_of.get(len(ids))
        if statement is None:
            statement = self._candidates_of[len(ids)] = self._sql(self._candidates_text.format(
                f" AND submission_id IN ({', '.join('?' * len(ids))})"))
        cur.execute(statement, (str(CS.REGISTERED), *ids))
        return cur

    def take(self, cur: Any, taken: dict[str, str], now: datetime
             ) -> tuple[dict[str, tuple], dict[str, tuple[int, int, int]]]:
        """These chains (id -> agent id) are RUNNING, each with a new run numbered one after
        its last. Returned, as they were before: id -> (submission id, chain JSON, results
        JSON, seq), and, of those that ran before, id -> (its last run's number, runs a
        chain-level `requeue' took back, runs that were cut: lost with their engine, or given
        back by a stopping one). On PostgreSQL all of it is one round trip."""
        ids = list(taken)
        marks = ", ".join("?" * len(ids))
        at = self.time(now)
        reading = cur.connection.cursor()
        fetched = None
        try:
            with self.batch(cur):
                reading.execute(self._sql(
                    "SELECT c.id, c.submission_id, c.chain, c.results, c.seq, r.last, "
                    "r.requeued, r.cut FROM process_chains c LEFT JOIN (SELECT chain_id, "
                    "max(run_number) AS last, count(CASE WHEN status = ? THEN 1 END) AS "
                    "requeued, count(CASE WHEN status IN (?, ?) THEN 1 END) AS cut FROM runs "
                    f"WHERE chain_id IN ({marks}) GROUP BY chain_id) r ON r.chain_id = c.id "
                    f"WHERE c.id IN ({marks})"),
                    (REQUEUED_RUN, AGENT_LOST, INTERRUPTED, *ids, *ids))
                if not self.postgres:  # (SQLite steps through the rows as they are fetched)
                    fetched = reading.fetchall()
                cur.executemany(self._set_running, [(str(CS.RUNNING), chain) for chain in ids])
                cur.executemany(self._add_next_run, [(chain, agent, at, chain)
                                                     for chain, agent in taken.items()])
            rows, so_far = {}, {}
            for cid, submission_id, chain, results, seq, last, requeued, cut in (
                    fetched if fetched is not None else reading.fetchall()):
                rows[cid] = (submission_id, chain, results, seq)
                if last is not None:
                    so_far[cid] = (last, requeued or 0, cut or 0)
            return rows, so_far
        finally:
            reading.close()

    def put_attempts(self, cur: Any, rows: Iterable[dict]) -> None:
        """Store these attempts' rows (`AttemptRecord.to_row()` with its chain and run),
        new or again."""
        values = [tuple(self.time(row[c]) if c in _TIMES else row[c] for c in _ATTEMPT_COLUMNS)
                  for row in rows]
        if values:
            cur.executemany(self._put_attempt, values)

    def end(self, cur: Any, looking: Any, ends: Sequence[Any], now: datetime
            ) -> Callable[[], set[tuple[str, int]]]:
        """Close these runs (`RunEnd`s), store their attempts, move their chains on, in the
        `batch` the caller opened. Only runs still open are closed (their rows locked first
        on PostgreSQL, so an engine closing them as lost at the same moment waits, then finds
        them closed): the function returned says which, as (chain id, run number), once the
        batch has ended (PostgreSQL answers at its end); the others' ends came too late and
        change nothing but the record of their attempts. `looking`, another cursor of the
        transaction (its caller closes it), reads which runs are open."""
        at = self.time(now)
        chains = sorted({e.chain_id for e in ends})
        looking.execute(self._sql(self._open_runs_text.format(", ".join("?" * len(chains)))),
                        chains)
        # (SQLite steps through the rows as they are fetched: before the updates)
        still_open = None if self.postgres else looking.fetchall()
        cur.executemany(self._end_run, [(at, e.run_status, e.error_message,
                                         self.time(e.auto_resume_after), e.chain_id,
                                         e.run_number) for e in ends])
        self.put_attempts(cur, ({**a.to_row(), "chain_id": e.chain_id, "run_number":
                                 e.run_number} for e in ends for a in e.attempts))
        cur.executemany(self._set_ended, [(
            str(e.chain_status), dump(e.results),
            self.time(e.auto_resume_after) if e.chain_status == CS.PAUSED else None,
            e.chain_id, str(CS.RUNNING), e.chain_id, e.run_number) for e in ends])

        def answer() -> set[tuple[str, int]]:
            return {(chain, number) for chain, number in
                    (still_open if still_open is not None else looking.fetchall())}

        return answer
