"""The reads of the commands that only read (`list', `show', `status', `logs', `events',
`wait'), as SQL text: the one home of each of these queries. They run alike through
SQLAlchemy's connection (servers, engines, PostgreSQL: SqlReadViews, SqlLogStore and
SqlLeases inherit them) and through Python's own sqlite3 (quick.py: such a command
imports no SQLAlchemy, issue 31). Times come back as datetimes and flags as booleans either
way; JSON columns are text."""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Iterable, Protocol, Sequence

from steepy.events import EventKind
from steepy.model.attempt import AttemptRecord
from steepy.model.common import as_utc, utcnow
from steepy.model.submission import FINISHED_SUBMISSION, Submission
from steepy.registry import documents
from steepy.registry.records import (ChainRecord, RunRecord, chain_record, run_record,
                                     submission_record)

if TYPE_CHECKING:  # (asyncio, which the clock's module imports, costs 0.02 s a start)
    from steepy.model.clock import Clock


class Query(Protocol):
    """A read transaction's connection."""

    dialect: str  # "sqlite" or "postgresql"

    def rows(self, sql: str, params: dict[str, Any], times: Sequence[str] = (),
             flags: Sequence[str] = ()) -> list[Any]:
        """The rows of `sql' (parameters `:name'), with attribute access; the columns named
        in `times' as datetimes, those in `flags' as booleans."""

    def time(self, value: datetime) -> Any:
        """`value' as a parameter compared with stored times."""


class Reader(Protocol):
    def reading(self) -> AbstractContextManager[Query]:
        """A read transaction: one snapshot, without the write lock."""


# a submission's columns without its workflow, then with it
SUBMISSION_HEAD = ("id, name, priority, status, required_capabilities, start_time, end_time, "
                   "error_message, results, vars, resume")
SUBMISSION = SUBMISSION_HEAD + ", workflow, source"
SUBMISSION_TIMES = ("start_time", "end_time")
CHAIN = ("seq, id, submission_id, status, priority, required_capabilities, chain, results, "
         "next_run_at, waiting, progress, reused")
RUN = ("chain_id, run_number, agent_id, start_time, end_time, status, error_message, "
       "auto_resume_after")
RUN_TIMES = ("start_time", "end_time", "auto_resume_after")
ATTEMPT = ("chain_id, run_number, executable_id, service_id, attempt, start_time, end_time, "
           "outcome, exit_code, signal, timeout_kind, delay_ms, delay_rule, last_lines, "
           "message, fallback_for, ordinal, due_time, host, executor_pid, executor_started, "
           "pgid, requeued_by")
ATTEMPT_TIMES = ("start_time", "end_time", "due_time")
EVENT = "id, submission_id, chain_id, time, kind, data"  # what documents.event_of takes


def listed(name: str, values: Sequence[Any], params: dict[str, Any]) -> str:
    """`(:name_0, :name_1, ...)' for an IN, the values put in `params'."""
    for index, value in enumerate(values):
        params[f"{name}_{index}"] = value
    return "(" + ", ".join(f":{name}_{i}" for i in range(len(values))) + ")"


def paged(q: Query, size: int | None, offset: int, params: dict[str, Any]) -> str:
    """LIMIT and OFFSET of a page (`size' None or negative: all from `offset')."""
    params["offset"] = max(0, offset)
    if size is not None and size >= 0:
        params["size"] = size
        return " LIMIT :size OFFSET :offset"
    return " LIMIT -1 OFFSET :offset" if q.dialect == "sqlite" else " OFFSET :offset"


def page(q: Query, table: str, columns: str, where: str, params: dict[str, Any],
         size: int | None, offset: int, order: str = "DESC", times: Sequence[str] = (),
         flags: Sequence[str] = ()) -> tuple[list[Any], int]:
    """A page of `table''s rows (`columns') that `where' takes, in insertion order (`seq',
    newest first unless `order' is ASC), and how many it takes (for paging headers)."""
    total = q.rows(f"SELECT count(*) AS n FROM {table}{where}", params)[0].n
    rows = q.rows(f"SELECT {columns} FROM {table}{where} ORDER BY seq {order}"
                  + paged(q, size, offset, params), params, times, flags)
    return rows, int(total or 0)


def json_field(q: Query, column: str, key: str) -> str:
    """The value at `key' of a JSON text column, read by the database."""
    if q.dialect == "postgresql":
        return f"CAST({column} AS JSON) -> '{key}'"
    return f"json_extract({column}, '$.{key}')"


def count_chains(q: Query, submission_ids: Sequence[str]) -> dict[str, dict[str, int]]:
    """Chains of each submission by status (one query for a page of submissions)."""
    counts: dict[str, dict[str, int]] = {i: {} for i in submission_ids}
    if submission_ids:
        params: dict[str, Any] = {}
        for r in q.rows("SELECT submission_id, status, count(*) AS n FROM process_chains "
                        f"WHERE submission_id IN {listed('s', submission_ids, params)} "
                        "GROUP BY submission_id, status", params):
            counts[r.submission_id][r.status] = r.n
    return counts


def _where(submission_id: str | None, status: str | None, params: dict[str, Any]) -> str:
    """The WHERE of a listing: of one submission (chains), with one status."""
    where = []
    if submission_id is not None:
        where.append("submission_id = :submission_id")
        params["submission_id"] = submission_id
    if status is not None:
        where.append("status = :status")
        params["status"] = str(status)
    return (" WHERE " + " AND ".join(where)) if where else ""


def latest_runs(q: Query, chain_ids: Sequence[str]) -> dict[str, Any]:
    """The newest run of each chain (one query for a page of chains)."""
    if not chain_ids:
        return {}
    params: dict[str, Any] = {}
    rows = q.rows(f"SELECT {RUN} FROM runs WHERE chain_id IN {listed('c', chain_ids, params)} "
                  "AND run_number = (SELECT max(r.run_number) FROM runs r "
                  "WHERE r.chain_id = runs.chain_id)", params, RUN_TIMES)
    return {r.chain_id: r for r in rows}


class TextReads:
    """What the CLI, the HTTP API and the UI show (steepy.registry.interfaces.ReadViews): the
    part that the commands that only read use."""

    def __init__(self, db: Reader):
        self.db = db

    def get_submission(self, submission_id: str) -> Submission | None:
        with self.db.reading() as q:
            rows = q.rows(f"SELECT {SUBMISSION} FROM submissions WHERE id = :id",
                          {"id": submission_id}, SUBMISSION_TIMES, ("resume",))
        return submission_record(rows[0]) if rows else None

    def list_submissions(self, status: str | None = None, size: int = 10,
                         offset: int = 0) -> tuple[list[Submission], int]:
        """Newest first, with the total count (for paging)."""
        params: dict[str, Any] = {}
        where = _where(None, status, params)
        with self.db.reading() as q:
            rows, total = page(q, "submissions", SUBMISSION, where, params, size, offset,
                               times=SUBMISSION_TIMES, flags=("resume",))
        return [submission_record(r) for r in rows], total

    def submission_status(self, submission_id: str) -> str | None:
        with self.db.reading() as q:
            rows = q.rows("SELECT status FROM submissions WHERE id = :id", {"id": submission_id})
        return rows[0].status if rows else None

    def submission_summaries(self, status: str | None = None, size: int = 10,
                             offset: int = 0) -> tuple[list[dict], int]:
        """A page of submissions, newest first, with chain counters; and the total number
        (for paging headers)."""
        params: dict[str, Any] = {}
        where = _where(None, status, params)
        with self.db.reading() as q:
            rows, total = page(q, "submissions", "id, name, priority, status, "
                               "required_capabilities, start_time, end_time", where, params,
                               size, offset, times=SUBMISSION_TIMES)
            counts = count_chains(q, [r.id for r in rows])
        return [documents.submission(r, counts[r.id], full=False) for r in rows], total

    def submission(self, submission_id: str, with_workflow: bool = True) -> dict | None:
        columns = SUBMISSION if with_workflow else SUBMISSION_HEAD
        with self.db.reading() as q:
            rows = q.rows(f"SELECT {columns} FROM submissions WHERE id = :id",
                          {"id": submission_id}, SUBMISSION_TIMES, ("resume",))
            if not rows:
                return None
            row = rows[0]
            counts = count_chains(q, [submission_id])[submission_id]
            reused = (q.rows("SELECT count(*) AS n FROM process_chains WHERE submission_id = "
                             ":id AND reused_from IS NOT NULL", {"id": submission_id})[0].n
                      if row.status in FINISHED_SUBMISSION else 0)  # (counted once it ended)
        found = documents.submission(row, counts, with_workflow)
        if reused:  # extensions 15: how many chains reused earlier work
            found["reusedProcessChains"] = reused
        return found

    def chain_counts(self, submission_id: str) -> dict[str, int]:
        with self.db.reading() as q:
            return count_chains(q, [submission_id])[submission_id]

    def get_chain(self, chain_id: str) -> ChainRecord | None:
        with self.db.reading() as q:
            rows = q.rows(f"SELECT {CHAIN} FROM process_chains WHERE id = :id", {"id": chain_id},
                          ("next_run_at",))
        return chain_record(rows[0]) if rows else None

    def list_chains(self, submission_id: str | None = None, status: str | None = None,
                    size: int | None = None, offset: int = 0,
                    oldest_first: bool = False) -> tuple[list[ChainRecord], int]:
        params: dict[str, Any] = {}
        where = _where(submission_id, status, params)
        with self.db.reading() as q:
            rows, total = page(q, "process_chains", CHAIN, where, params, size, offset,
                               "ASC" if oldest_first else "DESC", ("next_run_at",))
        return [chain_record(r) for r in rows], total

    def chains_after(self, submission_id: str, after_seq: int, size: int) -> list[ChainRecord]:
        """The submission's next `size` chains after `after_seq`, oldest first: a keyset
        page, which costs the same at the millionth chain as at the first (no count, no
        offset)."""
        with self.db.reading() as q:
            rows = q.rows(f"SELECT {CHAIN} FROM process_chains WHERE submission_id = :id AND "
                          "seq > :after ORDER BY seq ASC LIMIT :size",
                          {"id": submission_id, "after": after_seq, "size": size},
                          ("next_run_at",))
        return [chain_record(r) for r in rows]

    def chain_summaries(self, submission_id: str | None = None, status: str | None = None,
                        size: int = 10, offset: int = 0) -> tuple[list[dict], int]:
        """A page of process chains, newest first, without executables and results."""
        params: dict[str, Any] = {}
        where = _where(submission_id, status, params)
        with self.db.reading() as q:
            # (a chain's `retries' read by the database: a listing never parses executables)
            rows, total = page(q, "process_chains", "id, submission_id, status, priority, "
                               "required_capabilities, waiting, progress, "
                               f"{json_field(q, 'chain', 'retries')} AS retries", where,
                               params, size, offset)
            latest = latest_runs(q, [r.id for r in rows])
        return [documents.chain_summary(r, latest.get(r.id)) for r in rows], total

    def runs(self, chain_id: str) -> list[RunRecord]:
        return self._runs("chain_id = :id", {"id": chain_id})

    def submission_runs(self, submission_id: str,
                        chain_ids: list[str] | None = None) -> list[RunRecord]:
        """The runs of all chains of a submission (one query, for whole documents), or of
        those of its chains listed."""
        return self._runs(*_of_chains(submission_id, chain_ids))

    def _runs(self, where: str, params: dict[str, Any]) -> list[RunRecord]:
        with self.db.reading() as q:
            rows = q.rows(f"SELECT {RUN} FROM runs WHERE {where} ORDER BY chain_id, run_number",
                          params, RUN_TIMES)
        return [run_record(r) for r in rows]

    def attempts(self, chain_id: str, run_number: int | None = None) -> list[dict]:
        where, params = "chain_id = :id", {"id": chain_id}
        if run_number is not None:
            where, params["run"] = where + " AND run_number = :run", run_number
        return [a for _, a in self._attempts(where, params)]

    def submission_attempts(self, submission_id: str,
                            chain_ids: list[str] | None = None) -> list[tuple[str, dict]]:
        """(chain id, attempt) of all chains of a submission (or of those listed), in the
        order they happened."""
        return self._attempts(*_of_chains(submission_id, chain_ids))

    def _attempts(self, where: str, params: dict[str, Any]) -> list[tuple[str, dict]]:
        with self.db.reading() as q:
            rows = q.rows(f"SELECT {ATTEMPT} FROM attempts WHERE {where} ORDER BY id", params,
                          ATTEMPT_TIMES)
        return [(r.chain_id, {"runNumber": r.run_number, **AttemptRecord.from_row(r).to_json()})
                for r in rows]

    def events(self, submission_id: str, after: int = 0) -> list[dict]:
        with self.db.reading() as q:
            rows = q.rows(f"SELECT {EVENT} FROM events WHERE submission_id = :id AND id > "
                          ":after ORDER BY id", {"id": submission_id, "after": after}, ("time",))
        return [documents.event_of(*r) for r in rows]

    def agents(self, max_age_s: float) -> list[dict]:
        """Agents that sent a heartbeat within `max_age_s', in Steep's shape."""
        since = utcnow() - timedelta(seconds=max_age_s)
        with self.db.reading() as q:
            rows = q.rows("SELECT id, capabilities, start_time, state_changed_time, chain_id "
                          "FROM agents WHERE last_seen >= :since ORDER BY id",
                          {"since": q.time(since)}, ("start_time", "state_changed_time"))
        return [documents.agent(r) for r in rows]

    def skipped_actions(self, submission_id: str) -> dict[str, str]:
        """The actions skipped because a chain stopped early (extensions 10, 11): id -> why."""
        with self.db.reading() as q:
            rows = q.rows("SELECT data FROM events WHERE submission_id = :id AND kind = :kind "
                          "ORDER BY id", {"id": submission_id,
                                          "kind": str(EventKind.SUBMISSION_SKIPPED)})
        found = [json.loads(r.data) for r in rows]
        return {d["actionId"]: d["reason"] for d in found}


def _of_chains(submission_id: str, chain_ids: list[str] | None) -> tuple[str, dict[str, Any]]:
    """The rows of a submission's chains (those listed, or all)."""
    params: dict[str, Any] = {}
    if chain_ids is not None:
        return f"chain_id IN {listed('c', chain_ids, params)}" if chain_ids else "1 = 0", params
    params["submission"] = submission_id
    return ("chain_id IN (SELECT id FROM process_chains WHERE submission_id = :submission)",
            params)


class LogReads:
    """A run's log as the database keeps it (steepy.registry.interfaces.LogStore's reads)."""

    def __init__(self, db: Reader):
        self.db = db

    def size(self, chain_id: str, run_number: int) -> int | None:
        """How many bytes of the run's log are stored; None: none at all."""
        with self.db.reading() as q:
            return q.rows('SELECT max("offset" + length(data)) AS n FROM log_chunks WHERE '
                          "chain_id = :id AND run_number = :run",
                          {"id": chain_id, "run": run_number})[0].n

    def read(self, chain_id: str, run_number: int, start: int, end: int) -> bytes:
        """Bytes `start` to `end` (exclusive) of the run's log, as far as stored."""
        if end <= start:
            return b""
        with self.db.reading() as q:
            rows = q.rows('SELECT "offset" AS at, data FROM log_chunks WHERE chain_id = :id AND '
                          'run_number = :run AND "offset" < :end AND "offset" + length(data) > '
                          ':start ORDER BY "offset"', {"id": chain_id, "run": run_number,
                                                       "start": start, "end": end})
        out = bytearray()
        for offset, data in rows:
            begin = max(start, offset, start + len(out)) - offset
            out += data[begin:end - offset]
        return bytes(out)


# RUNNING without a live controller: without a lease (a retry made it RUNNING again), or its
# lease ran out and its engine's agents have been silent since (an engine alive, whose
# heartbeat skipped that lease while another transaction held its row, keeps it:
# `heartbeats._BEAT_FREE_LEASES'); leases._lease_over says the same for the engines, a test
# holds the two alike
_UNOWNED = ("SELECT id, lease_until FROM submissions s WHERE s.id IN {ids} AND s.status = "
            "'RUNNING' AND (s.lease_until IS NULL OR (s.lease_until < :now AND NOT EXISTS ("
            "SELECT 1 FROM agents a WHERE a.owner = s.owner AND a.last_seen >= s.lease_until)))")


class LeaseReads:
    def __init__(self, db: Reader, clock: Clock):
        self.db = db
        self.clock = clock  # heartbeats, leases and their ends are times on it

    def unowned(self, submission_ids: Iterable[str]) -> dict[str, datetime | None]:
        """Of these submissions, the RUNNING ones that no engine drives now (their lease ran
        out and their engine's agents have not beaten since, or a retry made them RUNNING
        again): id -> when the lease ran out (None: no engine has taken it since the
        retry)."""
        ids = list(submission_ids)
        now = self.clock.now()
        found: dict[str, datetime | None] = {}
        with self.db.reading() as q:
            for part in (ids[i:i + 500] for i in range(0, len(ids), 500)):
                params: dict[str, Any] = {"now": q.time(now)}
                sql = _UNOWNED.format(ids=listed("s", part, params))
                for row in q.rows(sql, params, ("lease_until",)):
                    found[row.id] = as_utc(row.lease_until)
        return found

