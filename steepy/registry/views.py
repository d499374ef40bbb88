"""Read views for the CLI, the HTTP API and the UI. Listings read only the columns a view
needs (a page of submissions never loads their workflows), so a page of 50 stays fast with
100,000 submissions stored; the JSON shapes are built in documents.py."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, func, select

from steepy.events import EventKind
from steepy.model.attempt import AttemptRecord
from steepy.model.common import as_utc
from steepy.model.submission import FINISHED_SUBMISSION, Submission, SubmissionStatus
from steepy.registry import documents
from steepy.registry.connector import Connector
from steepy.registry.records import (
    CS,
    ChainRecord,
    RunRecord,
    chain_record,
    run_record,
    submission_record,
    utcnow,
)
from steepy.registry.submissions import count_chains
from steepy.registry.tables import (
    agents,
    attempts,
    events,
    process_chains,
    runs,
    submissions,
)

_pc = process_chains.c
_sc = submissions.c
# what `documents.event_of` takes, in its order
EVENT_COLUMNS = (events.c.id, events.c.submission_id, events.c.chain_id, events.c.time,
                 events.c.kind, events.c.data)


def _page(query: Any, size: int | None, offset: int) -> Any:
    query = query.offset(max(0, offset))
    return query if size is None or size < 0 else query.limit(size)


class SqlReadViews:
    def __init__(self, db: Connector):
        self.db = db
        # a chain's `retries', read by the database: a listing never parses executables
        self._retries = db.dialect.json_field(_pc.chain, "retries")

    # ------------------------------------------------------------------ records

    def get_submission(self, submission_id: str) -> Submission | None:
        with self.db.read() as conn:
            row = conn.execute(select(submissions).where(_sc.id == submission_id)).first()
        return None if row is None else submission_record(row)

    def list_submissions(self, status: str | None = None, size: int = 10,
                         offset: int = 0) -> tuple[list[Submission], int]:
        """Newest first, with the total count (for paging)."""
        where = [] if status is None else [_sc.status == status]
        with self.db.read() as conn:
            total = conn.execute(select(func.count()).select_from(submissions).where(*where)).scalar()
            rows = conn.execute(_page(select(submissions).where(*where)
                                      .order_by(_sc.seq.desc()), size, offset)).all()
        return [submission_record(r) for r in rows], int(total or 0)

    def submission_ids(self, status: SubmissionStatus) -> list[str]:
        with self.db.read() as conn:
            return list(conn.execute(select(_sc.id).where(_sc.status == status)
                                     .order_by(_sc.seq)).scalars())

    def get_chain(self, chain_id: str) -> ChainRecord | None:
        with self.db.read() as conn:
            row = conn.execute(select(process_chains).where(_pc.id == chain_id)).first()
        return None if row is None else chain_record(row)

    def list_chains(self, submission_id: str | None = None, status: str | None = None,
                    size: int | None = None, offset: int = 0,
                    oldest_first: bool = False) -> tuple[list[ChainRecord], int]:
        where = self._chain_filter(submission_id, status)
        with self.db.read() as conn:
            total = conn.execute(select(func.count()).select_from(process_chains)
                                 .where(*where)).scalar()
            order = _pc.seq.asc() if oldest_first else _pc.seq.desc()
            rows = conn.execute(_page(select(process_chains).where(*where)
                                      .order_by(order), size, offset)).all()
        return [chain_record(r) for r in rows], int(total or 0)

    def chains_after(self, submission_id: str, after_seq: int, size: int) -> list[ChainRecord]:
        """The submission's next `size` chains after `after_seq`, oldest first: a keyset
        page, which costs the same at the millionth chain as at the first (no count, no
        offset)."""
        with self.db.read() as conn:
            rows = conn.execute(select(process_chains).where(
                _pc.submission_id == submission_id, _pc.seq > after_seq)
                .order_by(_pc.seq.asc()).limit(size)).all()
        return [chain_record(r) for r in rows]

    @staticmethod
    def _chain_filter(submission_id: str | None, status: str | None) -> list:
        where = []
        if submission_id is not None:
            where.append(_pc.submission_id == submission_id)
        if status is not None:
            where.append(_pc.status == status)
        return where

    def chain_counts(self, submission_id: str) -> dict[str, int]:
        with self.db.read() as conn:
            return count_chains(conn, [submission_id])[submission_id]

    def waiting_counts(self, submission_id: str) -> dict[str, int]:
        """REGISTERED chains of a submission that cannot start, by reason."""
        with self.db.read() as conn:
            rows = conn.execute(select(_pc.waiting, func.count()).where(
                _pc.submission_id == submission_id, _pc.status == CS.REGISTERED,
                _pc.waiting.is_not(None)).group_by(_pc.waiting)).all()
        return {reason: count for reason, count in rows}

    def runs(self, chain_id: str) -> list[RunRecord]:
        return self._runs(runs.c.chain_id == chain_id)

    def submission_runs(self, submission_id: str,
                        chain_ids: list[str] | None = None) -> list[RunRecord]:
        """The runs of all chains of a submission (one query, for whole documents), or of
        those of its chains listed."""
        return self._runs(runs.c.chain_id.in_(
            chain_ids if chain_ids is not None
            else select(_pc.id).where(_pc.submission_id == submission_id)))

    def _runs(self, where: Any) -> list[RunRecord]:
        with self.db.read() as conn:
            rows = conn.execute(select(runs).where(where)
                                .order_by(runs.c.chain_id, runs.c.run_number)).all()
        return [run_record(r) for r in rows]

    def attempts(self, chain_id: str, run_number: int | None = None) -> list[dict]:
        where = [attempts.c.chain_id == chain_id]
        if run_number is not None:
            where.append(attempts.c.run_number == run_number)
        return [a for _, a in self._attempts(*where)]

    def submission_attempts(self, submission_id: str,
                            chain_ids: list[str] | None = None) -> list[tuple[str, dict]]:
        """(chain id, attempt) of all chains of a submission (or of those listed), in the
        order they happened."""
        return self._attempts(attempts.c.chain_id.in_(
            chain_ids if chain_ids is not None
            else select(_pc.id).where(_pc.submission_id == submission_id)))

    def _attempts(self, *where: Any) -> list[tuple[str, dict]]:
        with self.db.read() as conn:
            rows = conn.execute(select(attempts).where(*where).order_by(attempts.c.id)).all()
        return [(r.chain_id, {"runNumber": r.run_number, **AttemptRecord.from_row(r).to_json()})
                for r in rows]

    def events(self, submission_id: str, after: int = 0) -> list[dict]:
        with self.db.read() as conn:
            rows = conn.execute(select(*EVENT_COLUMNS).where(
                events.c.submission_id == submission_id, events.c.id > after)
                .order_by(events.c.id)).all()
        return [documents.event_of(*r) for r in rows]

    def skipped_actions(self, submission_id: str) -> dict[str, str]:
        """The actions skipped because a chain stopped early (extensions 10, 11): id -> why."""
        with self.db.read() as conn:
            rows = conn.execute(select(events.c.data).where(
                events.c.submission_id == submission_id,
                events.c.kind == str(EventKind.SUBMISSION_SKIPPED)).order_by(events.c.id)).all()
        found = [json.loads(r.data) for r in rows]
        return {d["actionId"]: d["reason"] for d in found}

    def reused_times(self, submission_id: str) -> dict[str, datetime]:
        """When each reused chain of a submission was stored (extensions 15): chain id ->
        the time of its `chain.reused' event."""
        with self.db.read() as conn:
            rows = conn.execute(select(events.c.chain_id, events.c.time).where(
                events.c.submission_id == submission_id,
                events.c.kind == str(EventKind.CHAIN_REUSED))).all()
        return {r.chain_id: as_utc(r.time) for r in rows}

    def feed(self, after: int = 0, submission_id: str | None = None,
             limit: int = 1000) -> list[dict]:
        """The whole timeline (every submission's events, agents arriving and leaving) after
        event `after`, oldest first; ids follow the order of commits."""
        where = [events.c.id > after]
        if submission_id is not None:
            where.append(events.c.submission_id == submission_id)
        with self.db.read() as conn:
            rows = conn.execute(select(*EVENT_COLUMNS).where(*where).order_by(events.c.id)
                                .limit(limit)).all()
        return [documents.event_of(*r, with_submission=True) for r in rows]

    def last_event_id(self) -> int:
        with self.db.read() as conn:
            return int(conn.execute(select(func.max(events.c.id))).scalar() or 0)

    # ------------------------------------------------------------------ Steep's shapes

    def submission_summaries(self, status: str | None = None, size: int = 10,
                             offset: int = 0) -> tuple[list[dict], int]:
        """A page of submissions, newest first, with chain counters; and the total number
        (for paging headers)."""
        where = [] if status is None else [_sc.status == status]
        query = select(_sc.id, _sc.name, _sc.priority, _sc.status, _sc.required_capabilities,
                       _sc.start_time, _sc.end_time).where(*where).order_by(_sc.seq.desc())
        with self.db.read() as conn:
            total = conn.execute(select(func.count()).select_from(submissions)
                                 .where(*where)).scalar()
            rows = conn.execute(_page(query, size, offset)).all()
            counts = count_chains(conn, [r.id for r in rows])
        return [documents.submission(r, counts[r.id], full=False) for r in rows], int(total or 0)

    def submission(self, submission_id: str, with_workflow: bool = True) -> dict | None:
        columns = [_sc.id, _sc.name, _sc.priority, _sc.status, _sc.required_capabilities,
                   _sc.start_time, _sc.end_time, _sc.error_message, _sc.results, _sc.vars,
                   _sc.resume]
        if with_workflow:
            columns += [_sc.workflow, _sc.source]
        with self.db.read() as conn:
            row = conn.execute(select(*columns).where(_sc.id == submission_id)).first()
            if row is None:
                return None
            counts = count_chains(conn, [submission_id])[submission_id]
            reused = (conn.execute(select(func.count()).select_from(process_chains).where(
                _pc.submission_id == submission_id, _pc.reused_from.is_not(None))).scalar()
                if row.status in FINISHED_SUBMISSION else 0)  # (counted once it ended)
        found = documents.submission(row, counts, with_workflow)
        if reused:  # extensions 15: how many chains reused earlier work
            found["reusedProcessChains"] = reused
        return found

    def submission_status(self, submission_id: str) -> str | None:
        with self.db.read() as conn:
            return conn.execute(select(_sc.status).where(_sc.id == submission_id)).scalar()

    def chain_summaries(self, submission_id: str | None = None, status: str | None = None,
                        size: int = 10, offset: int = 0) -> tuple[list[dict], int]:
        """A page of process chains, newest first, without executables and results."""
        where = self._chain_filter(submission_id, status)
        query = (select(_pc.id, _pc.submission_id, _pc.status, _pc.priority,
                        _pc.required_capabilities, _pc.waiting, _pc.progress,
                        self._retries.label("retries"))
                 .where(*where).order_by(_pc.seq.desc()))
        with self.db.read() as conn:
            total = conn.execute(select(func.count()).select_from(process_chains)
                                 .where(*where)).scalar()
            rows = conn.execute(_page(query, size, offset)).all()
            latest = _latest_runs(conn, [r.id for r in rows])
        return [documents.chain_summary(r, latest.get(r.id)) for r in rows], int(total or 0)

    def chain(self, chain_id: str, run_number: int | None = None,
              with_executables: bool = True) -> dict | None:
        with self.db.read() as conn:
            row = conn.execute(select(process_chains).where(_pc.id == chain_id)).first()
            if row is None:
                return None
            all_runs = conn.execute(select(runs).where(runs.c.chain_id == chain_id)
                                    .order_by(runs.c.run_number)).all()
        return documents.chain(row, all_runs, run_number, with_executables)

    def chain_status(self, chain_id: str) -> tuple[str, str] | None:
        """(status, submission id) of a chain; None: unknown."""
        with self.db.read() as conn:
            row = conn.execute(select(_pc.status, _pc.submission_id)
                               .where(_pc.id == chain_id)).first()
        return None if row is None else (row.status, row.submission_id)

    def run_numbers(self, chain_id: str) -> list[int]:
        with self.db.read() as conn:
            return list(conn.execute(select(runs.c.run_number).where(runs.c.chain_id == chain_id)
                                     .order_by(runs.c.run_number)).scalars())

    def agents(self, max_age_s: float) -> list[dict]:
        """Agents that sent a heartbeat within `max_age_s', in Steep's shape."""
        since = utcnow() - timedelta(seconds=max_age_s)
        with self.db.read() as conn:
            rows = conn.execute(select(agents).where(agents.c.last_seen >= since)
                                .order_by(agents.c.id)).all()
        return [documents.agent(r) for r in rows]

    def metrics(self, agent_max_age_s: float) -> dict[str, Any]:
        """Counts for /metrics: submissions and chains by status, runs by status, retries
        (attempts after the first) by service, and live agents."""
        since = utcnow() - timedelta(seconds=agent_max_age_s)
        with self.db.read() as conn:  # one snapshot
            subs = _submission_counts(conn)
            chains = dict(conn.execute(select(_pc.status, func.count())
                                       .group_by(_pc.status)).all())
            run_rows = {status or "RUNNING": n for status, n in  # no status yet: running
                        conn.execute(select(runs.c.status, func.count())
                                     .group_by(runs.c.status)).all()}
            retries = dict(conn.execute(select(attempts.c.service_id, func.count())
                                        .where(attempts.c.attempt > 1)
                                        .group_by(attempts.c.service_id)).all())
            live = conn.execute(select(agents.c.chain_id).where(agents.c.last_seen >= since)).all()
            waiting = _waited_for(conn)
        return {"submissions": subs, "chains": chains, "runs": run_rows, "retries": retries,
                "agents": len(live), "busy_agents": sum(1 for r in live if r.chain_id),
                "waited_for": waiting}

    def submission_counts(self) -> dict[str, int]:
        """Submissions by status (the web UI's filters; only the statuses there are)."""
        with self.db.read() as conn:
            return _submission_counts(conn)

    def count_submissions(self) -> int:
        with self.db.read() as conn:
            return int(conn.execute(select(func.count()).select_from(submissions)).scalar() or 0)


def _waited_for(conn: Connection) -> dict[str, int]:
    """Each RUNNING submission's chains whose outcome its controller has not taken in yet
    (Steep's steep_controller_process_chains)."""
    unfed = process_chains.join(submissions, _pc.submission_id == _sc.id)
    found = dict(conn.execute(select(_pc.submission_id, func.count()).select_from(unfed).where(
        _sc.status == SubmissionStatus.RUNNING, _pc.fed_round.is_(None))
        .group_by(_pc.submission_id)).all())
    running = conn.execute(select(_sc.id).where(_sc.status == SubmissionStatus.RUNNING)).scalars()
    return {sid: found.get(sid, 0) for sid in running}


def _submission_counts(conn: Connection) -> dict[str, int]:
    return dict(conn.execute(select(_sc.status, func.count()).group_by(_sc.status)).all())


def _latest_runs(conn: Connection, chain_ids: list[str]) -> dict[str, Any]:
    """The newest run of each chain (one query for a page of chains)."""
    if not chain_ids:
        return {}
    newest = (select(runs.c.chain_id, func.max(runs.c.run_number).label("n"))
              .where(runs.c.chain_id.in_(chain_ids)).group_by(runs.c.chain_id).subquery())
    rows = conn.execute(select(runs).join(newest, (runs.c.chain_id == newest.c.chain_id)
                                          & (runs.c.run_number == newest.c.n)))
    return {r.chain_id: r for r in rows}
