"""Registry queries and updates for the HTTP API.

Listings here read only the columns a view needs (a list of submissions never loads their
workflows), so a page of 50 stays fast with 100,000 submissions stored. Views are built in
Steep's JSON shapes (reference section 8); the registry's own methods stay the source of
truth for every state change the engine acts on.
"""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import Connection, cast, func, insert, select, update
from sqlalchemy.types import JSON

from steepy.model.common import as_utc as _utc
from steepy.model.common import iso_time
from steepy.model.submission import (ACTIVE_CHAIN, ACTIVE_SUBMISSION, CHAIN_COUNTERS,
                                     SUCCEEDED_SUBMISSION, ProcessChainStatus as CS,
                                     SubmissionStatus as SS)
from steepy.registry.store import Registry
from steepy.registry.tables import agents, attempts, events, process_chains, runs, submissions




def _time(value: datetime | None) -> str | None:
    return iso_time(_utc(value))


def _load(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _put(out: dict, key: str, value: Any) -> None:
    if value is not None:
        out[key] = value


def _put_waiting(out: dict, row: Any) -> None:
    """steepy's `waiting': why a REGISTERED chain cannot start (no agent offers ...)."""
    if row.status == CS.REGISTERED:
        _put(out, "waiting", row.waiting)


def _counters(out: dict, counts: dict[str, int]) -> dict:
    for status, key in CHAIN_COUNTERS:
        out[key] = counts.get(status, 0)
    out["totalProcessChains"] = sum(counts.values())
    return out


class Queries:
    """Read models and small updates over a `Registry`'s database."""

    def __init__(self, registry: Registry):
        self.registry = registry
        self.engine = registry.engine
        self._retries = self._retries_column()

    def _retries_column(self) -> Any:
        """The `retries' of a chain's stored JSON, extracted by the database, so a listing
        never parses the (possibly large) executables."""
        if self.engine.dialect.name == "sqlite":
            return func.json_extract(process_chains.c.chain, "$.retries")
        return cast(process_chains.c.chain, JSON)["retries"]

    def _write(self) -> AbstractContextManager[Connection]:
        return self.registry.write()  # the registry's lock, and NOTIFY on PostgreSQL

    def _read(self) -> AbstractContextManager[Connection]:
        return self.registry.read()

    # ------------------------------------------------------------------ submissions

    def _chain_counts(self, conn: Connection, ids: list[str]) -> dict[str, dict[str, int]]:
        counts: dict[str, dict[str, int]] = {i: {} for i in ids}
        if ids:
            rows = conn.execute(select(process_chains.c.submission_id, process_chains.c.status,
                                       func.count())
                                .where(process_chains.c.submission_id.in_(ids))
                                .group_by(process_chains.c.submission_id, process_chains.c.status))
            for submission_id, status, count in rows:
                counts[submission_id][status] = count
        return counts

    def submission_summaries(self, status: str | None = None, size: int = 10,
                             offset: int = 0) -> tuple[list[dict], int]:
        """A page of submissions, newest first, without workflow, source, results and error
        message but with chain counters; and the total number (for paging headers)."""
        where = [] if status is None else [submissions.c.status == status]
        c = submissions.c
        query = (select(c.id, c.name, c.priority, c.status, c.required_capabilities,
                        c.start_time, c.end_time)
                 .where(*where).order_by(c.seq.desc()).offset(max(0, offset)))
        if size >= 0:
            query = query.limit(size)
        with self._read() as conn:
            total = conn.execute(select(func.count()).select_from(submissions)
                                 .where(*where)).scalar()
            rows = conn.execute(query).all()
            counts = self._chain_counts(conn, [r.id for r in rows])
        out = []
        for r in rows:
            item: dict[str, Any] = {"id": r.id}
            _put(item, "name", r.name)
            item.update(priority=r.priority, status=r.status,
                        requiredCapabilities=_load(r.required_capabilities) or [])
            _put(item, "startTime", _time(r.start_time))
            _put(item, "endTime", _time(r.end_time))
            out.append(_counters(item, counts[r.id]))
        return out, int(total or 0)

    def submission(self, submission_id: str, with_workflow: bool = True) -> dict | None:
        """One submission in Steep's shape, with chain counters; `results' only after
        SUCCESS or PARTIAL_SUCCESS and `errorMessage' only after ERROR."""
        c = submissions.c
        columns = [c.id, c.name, c.priority, c.status, c.required_capabilities, c.start_time,
                   c.end_time, c.error_message, c.results]
        if with_workflow:
            columns += [c.workflow, c.source]
        with self._read() as conn:
            row = conn.execute(select(*columns).where(c.id == submission_id)).first()
            if row is None:
                return None
            counts = self._chain_counts(conn, [submission_id])[submission_id]
        out: dict[str, Any] = {"id": row.id}
        _put(out, "name", row.name)
        if with_workflow:
            out["workflow"] = _load(row.workflow)
        out.update(priority=row.priority, status=row.status,
                   requiredCapabilities=_load(row.required_capabilities) or [])
        _put(out, "startTime", _time(row.start_time))
        _put(out, "endTime", _time(row.end_time))
        if with_workflow:
            _put(out, "source", row.source)
        if row.status == SS.ERROR:
            _put(out, "errorMessage", row.error_message)
        if row.status in SUCCEEDED_SUBMISSION:
            _put(out, "results", _load(row.results))
        return _counters(out, counts)

    def submission_status(self, submission_id: str) -> str | None:
        with self._read() as conn:
            return conn.execute(select(submissions.c.status)
                                .where(submissions.c.id == submission_id)).scalar()

    def set_submission_priority(self, submission_id: str, priority: int) -> str | None:
        """Change the priority of an ACCEPTED or RUNNING submission and of its chains that
        have not finished. Returns the submission's status (None: unknown); nothing changes
        unless that status is ACCEPTED or RUNNING."""
        with self._write() as conn:
            status = conn.execute(select(submissions.c.status)
                                  .where(submissions.c.id == submission_id)).scalar()
            if status not in ACTIVE_SUBMISSION:
                return status
            conn.execute(update(submissions).where(submissions.c.id == submission_id)
                         .values(priority=priority))
            conn.execute(update(process_chains).where(
                process_chains.c.submission_id == submission_id,
                process_chains.c.status.in_(sorted(ACTIVE_CHAIN))).values(priority=priority))
            _event(conn, submission_id, "submission.priority", priority=priority)
            return status

    # ------------------------------------------------------------------ process chains

    def _latest_runs(self, conn: Connection, chain_ids: list[str]) -> dict[str, Any]:
        """The newest run of each chain (one query for a page of chains)."""
        if not chain_ids:
            return {}
        newest = (select(runs.c.chain_id, func.max(runs.c.run_number).label("n"))
                  .where(runs.c.chain_id.in_(chain_ids)).group_by(runs.c.chain_id).subquery())
        rows = conn.execute(select(runs).join(newest, (runs.c.chain_id == newest.c.chain_id)
                                              & (runs.c.run_number == newest.c.n)))
        return {r.chain_id: r for r in rows}

    @staticmethod
    def _run_fields(out: dict, status: str, run: Any, full: bool) -> None:
        if run is not None:
            _put(out, "agentId", run.agent_id)
            _put(out, "startTime", _time(run.start_time))
            _put(out, "endTime", _time(run.end_time))
            if status == CS.ERROR:
                _put(out, "errorMessage", run.error_message)
            if full:
                _put(out, "autoResumeAfter", _time(run.auto_resume_after))

    def chain_summaries(self, submission_id: str | None = None, status: str | None = None,
                        size: int = 10, offset: int = 0) -> tuple[list[dict], int]:
        """A page of process chains, newest first, without executables and results."""
        c = process_chains.c
        where = []
        if submission_id is not None:
            where.append(c.submission_id == submission_id)
        if status is not None:
            where.append(c.status == status)
        query = (select(c.id, c.submission_id, c.status, c.priority, c.required_capabilities,
                        c.waiting, self._retries.label("retries"))
                 .where(*where).order_by(c.seq.desc()).offset(max(0, offset)))
        if size >= 0:
            query = query.limit(size)
        with self._read() as conn:
            total = conn.execute(select(func.count()).select_from(process_chains)
                                 .where(*where)).scalar()
            rows = conn.execute(query).all()
            latest = self._latest_runs(conn, [r.id for r in rows])
        out = []
        for r in rows:
            item: dict[str, Any] = {"id": r.id, "requiredCapabilities":
                                    _load(r.required_capabilities) or []}
            if r.priority:
                item["priority"] = r.priority
            retries = r.retries if not isinstance(r.retries, str) else json.loads(r.retries)
            _put(item, "retries", retries)
            item.update(submissionId=r.submission_id, status=r.status)
            _put_waiting(item, r)
            self._run_fields(item, r.status, latest.get(r.id), full=False)
            out.append(item)
        return out, int(total or 0)

    def chain(self, chain_id: str, run_number: int | None = None,
              with_executables: bool = True) -> dict | None:
        """One process chain in Steep's shape: as of its latest run, or of run `run_number'
        (then its status is that run's). None: unknown chain, or no such run."""
        with self._read() as conn:
            row = conn.execute(select(process_chains)
                               .where(process_chains.c.id == chain_id)).first()
            if row is None:
                return None
            all_runs = conn.execute(select(runs).where(runs.c.chain_id == chain_id)
                                    .order_by(runs.c.run_number)).all()
        out = _load(row.chain)
        if not with_executables:
            out.pop("executables", None)
        out.pop("priority", None)
        if row.priority:  # the column is current; the stored JSON has the first priority
            out["priority"] = row.priority
        status = row.status
        if run_number is None:
            run = all_runs[-1] if all_runs else None
        else:
            run = next((r for r in all_runs if r.run_number == run_number), None)
            if run is None:
                return None
            if run.run_number != all_runs[-1].run_number:  # an earlier run: its own outcome
                status = run.status or "RUNNING"
        out.update(submissionId=row.submission_id, status=status)
        _put_waiting(out, row)
        self._run_fields(out, status, run, full=True)
        if with_executables and status == CS.SUCCESS and row.results is not None:
            out["results"] = _load(row.results)
        out["totalRuns"] = len(all_runs)
        _put(out, "runNumber", None if run is None else run.run_number)
        return out

    def chain_status(self, chain_id: str) -> tuple[str, str] | None:
        """(status, submission id) of a chain; None: unknown."""
        with self._read() as conn:
            row = conn.execute(select(process_chains.c.status, process_chains.c.submission_id)
                               .where(process_chains.c.id == chain_id)).first()
        return None if row is None else (row.status, row.submission_id)

    def run_numbers(self, chain_id: str) -> list[int]:
        with self._read() as conn:
            return list(conn.execute(select(runs.c.run_number).where(runs.c.chain_id == chain_id)
                                     .order_by(runs.c.run_number)).scalars())

    def set_chain_priority(self, chain_id: str, priority: int) -> str | None:
        """Change the priority of a REGISTERED, RUNNING or PAUSED chain. Returns its status
        (None: unknown); nothing changes in any other status."""
        with self._write() as conn:
            row = conn.execute(select(process_chains.c.status, process_chains.c.submission_id)
                               .where(process_chains.c.id == chain_id)).first()
            if row is None or row.status not in ACTIVE_CHAIN:
                return None if row is None else row.status
            conn.execute(update(process_chains).where(process_chains.c.id == chain_id)
                         .values(priority=priority))
            _event(conn, row.submission_id, "chain.priority", chain_id, priority=priority)
            return row.status

    # ------------------------------------------------------------------ agents and metrics

    def agents(self, max_age_s: float) -> list[dict]:
        """Agents that sent a heartbeat within `max_age_s', in Steep's shape."""
        since = datetime.now(timezone.utc) - timedelta(seconds=max_age_s)
        with self._read() as conn:
            rows = conn.execute(select(agents).where(agents.c.last_seen >= since)
                                .order_by(agents.c.id)).all()
        out = []
        for r in rows:
            item = {"id": r.id, "available": r.chain_id is None,
                    "capabilities": _load(r.capabilities) or [],
                    "startTime": _time(r.start_time),
                    "stateChangedTime": _time(r.state_changed_time)}
            _put(item, "processChainId", r.chain_id)
            out.append(item)
        return out

    def metrics(self, agent_max_age_s: float) -> dict[str, Any]:
        """Counts for /metrics: submissions and chains by status, runs by status, retries
        (attempts after the first) by service, and live agents."""
        since = datetime.now(timezone.utc) - timedelta(seconds=agent_max_age_s)
        with self._read() as conn:
            subs = dict(conn.execute(select(submissions.c.status, func.count())
                                     .group_by(submissions.c.status)).all())
            chains = dict(conn.execute(select(process_chains.c.status, func.count())
                                       .group_by(process_chains.c.status)).all())
            run_rows = {status or "RUNNING": n for status, n in  # no status yet: running
                        conn.execute(select(runs.c.status, func.count())
                                     .group_by(runs.c.status)).all()}
            retries = dict(conn.execute(select(attempts.c.service_id, func.count())
                                        .where(attempts.c.attempt > 1)
                                        .group_by(attempts.c.service_id)).all())
            live = conn.execute(select(agents.c.chain_id).where(agents.c.last_seen >= since)).all()
        return {"submissions": subs, "chains": chains, "runs": run_rows, "retries": retries,
                "agents": len(live), "busy_agents": sum(1 for r in live if r.chain_id)}

    def count_submissions(self) -> int:
        with self._read() as conn:
            return int(conn.execute(select(func.count()).select_from(submissions)).scalar() or 0)


def _event(conn: Connection, submission_id: str, kind: str, chain_id: str | None = None,
           **data: Any) -> None:
    conn.execute(insert(events).values(submission_id=submission_id, chain_id=chain_id,
                                       time=datetime.now(timezone.utc), kind=kind,
                                       data=json.dumps(data, separators=(",", ":"))))
