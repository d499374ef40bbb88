"""Read views for the CLI, the HTTP API and the UI. Listings read only the columns a view
needs (a page of submissions never loads their workflows), so a page of 50 stays fast with
100,000 submissions stored; the JSON shapes are built in documents.py. The reads of the
commands that only read are SQL text in reads.py (they run without SQLAlchemy there); the
others are here."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, func, select

from steepy.events import EventKind
from steepy.model.common import as_utc
from steepy.model.submission import SubmissionStatus
from steepy.registry import documents
from steepy.registry.connector import Connector
from steepy.registry.reads import TextReads
from steepy.registry.records import CS, utcnow
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


class SqlReadViews(TextReads):
    db: Connector  # (the reads of TextReads take it as their Reader)

    def submission_ids(self, status: SubmissionStatus) -> list[str]:
        with self.db.read() as conn:
            return list(conn.execute(select(_sc.id).where(_sc.status == status)
                                     .order_by(_sc.seq)).scalars())

    def waiting_counts(self, submission_id: str) -> dict[str, int]:
        """REGISTERED chains of a submission that cannot start, by reason."""
        with self.db.read() as conn:
            rows = conn.execute(select(_pc.waiting, func.count()).where(
                _pc.submission_id == submission_id, _pc.status == CS.REGISTERED,
                _pc.waiting.is_not(None)).group_by(_pc.waiting)).all()
        return {reason: count for reason, count in rows}

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

