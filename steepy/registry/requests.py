"""User requests: submit, cancel, retry (extension 5) and change priorities. Each answers
with the status the submission or chain had, so callers can tell why nothing changed."""

from __future__ import annotations

from sqlalchemy import Connection, func, insert, select, update

from steepy import events as ev
from steepy.model.submission import (
    ACTIVE_CHAIN,
    ACTIVE_SUBMISSION,
    RETRYABLE_SUBMISSION,
    WAITING_CHAIN,
    Submission,
)
from steepy.registry.connector import Connector
from steepy.registry.records import CS, SS, add_event, dump, utcnow
from steepy.registry.submissions import cancel_waiting_chains
from steepy.registry.tables import process_chains, submissions

_pc = process_chains.c
_sc = submissions.c


def insert_submission(conn: Connection, submission: Submission) -> None:
    """Store a new submission and its first timeline event (also a schedule's firing)."""
    conn.execute(insert(submissions).values(
        id=submission.id, name=submission.name, priority=submission.priority,
        workflow_priority=submission.workflow.priority, status=str(submission.status),
        workflow=dump(submission.workflow.to_json()), source=submission.source,
        vars=dump(submission.vars) if submission.vars else None, resume=submission.resume,
        required_capabilities=dump(list(submission.required_capabilities)),
        created_time=utcnow(), cancel_requested=False))
    add_event(conn, submission.id, ev.SubmissionStatusChanged(status=str(submission.status)))


class SqlRequests:
    def __init__(self, db: Connector):
        self.db = db

    def add_submission(self, submission: Submission) -> None:
        with self.db.write() as conn:
            insert_submission(conn, submission)

    def cancel_submission(self, submission_id: str) -> tuple[str | None, list[str]]:
        """Cancel: an ACCEPTED submission ends CANCELLED at once; a RUNNING one has its waiting
        chains cancelled. Returns (status before, RUNNING chain ids to stop)."""
        with self.db.write() as conn:
            status = conn.execute(select(_sc.status).where(_sc.id == submission_id)).scalar()
            if status == SS.ACCEPTED:
                conn.execute(update(submissions).where(_sc.id == submission_id).values(
                    status=SS.CANCELLED, cancel_requested=True, end_time=utcnow()))
                add_event(conn, submission_id, ev.SubmissionStatusChanged(status=str(SS.CANCELLED)))
                return status, []
            if status != SS.RUNNING:
                return status, []
            return status, cancel_waiting_chains(conn, submission_id)

    def retry_submission(self, submission_id: str) -> str | None:
        """Extension 5: ERROR, PARTIAL_SUCCESS or CANCELLED back to RUNNING; failed and
        cancelled chains are REGISTERED again. Returns the status before (None: unknown)."""
        with self.db.write() as conn:
            status = conn.execute(select(_sc.status).where(_sc.id == submission_id)).scalar()
            if status not in RETRYABLE_SUBMISSION:
                return status
            # (a chain cancelled on its own keeps no request: it would be cancelled again)
            conn.execute(update(process_chains).where(
                _pc.submission_id == submission_id, _pc.status.in_([CS.ERROR, CS.CANCELLED]))
                .values(status=CS.REGISTERED, fed_round=None, next_run_at=None,
                        cancel_requested=False))
            conn.execute(update(submissions).where(_sc.id == submission_id).values(
                status=SS.RUNNING, end_time=None, error_message=None, results=None,
                cancel_requested=False, owner=None, lease_until=None,
                start_time=func.coalesce(_sc.start_time, utcnow())))  # cancelled ACCEPTED
            add_event(conn, submission_id, ev.SubmissionRetried(previous=str(status)))
            add_event(conn, submission_id, ev.SubmissionStatusChanged(status=str(SS.RUNNING)))
            return status

    def cancel_chain(self, chain_id: str) -> str | None:
        """Cancel one chain: REGISTERED or PAUSED ends CANCELLED at once; a RUNNING one is
        flagged for its agent. Returns the status before (None: unknown chain)."""
        with self.db.write() as conn:
            row = conn.execute(select(_pc.status, _pc.submission_id)
                               .where(_pc.id == chain_id)).first()
            if row is None:
                return None
            if row.status not in ACTIVE_CHAIN:  # finished: nothing to cancel, nothing said
                return row.status
            if row.status in WAITING_CHAIN:
                conn.execute(update(process_chains).where(_pc.id == chain_id)
                             .values(status=CS.CANCELLED, next_run_at=None, cancel_requested=True))
            elif row.status == CS.RUNNING:
                conn.execute(update(process_chains).where(_pc.id == chain_id)
                             .values(cancel_requested=True))
            add_event(conn, row.submission_id, ev.ChainCancelRequested(
                previous=str(row.status),
                status=str(CS.CANCELLED if row.status in WAITING_CHAIN else row.status)), chain_id)
            return row.status

    def set_submission_priority(self, submission_id: str, priority: int) -> str | None:
        """Change the priority of an ACCEPTED or RUNNING submission and of its chains that
        have not finished. Returns the submission's status (None: unknown); nothing changes
        unless that status is ACCEPTED or RUNNING."""
        with self.db.write() as conn:
            status = conn.execute(select(_sc.status).where(_sc.id == submission_id)).scalar()
            if status not in ACTIVE_SUBMISSION:
                return status
            conn.execute(update(submissions).where(_sc.id == submission_id)
                         .values(priority=priority))
            conn.execute(update(process_chains).where(
                _pc.submission_id == submission_id, _pc.status.in_(sorted(ACTIVE_CHAIN)))
                .values(priority=priority))
            add_event(conn, submission_id, ev.SubmissionPriority(priority=priority))
            return status

    def set_chain_priority(self, chain_id: str, priority: int) -> str | None:
        """Change the priority of a REGISTERED, RUNNING or PAUSED chain. Returns its status
        (None: unknown); nothing changes in any other status."""
        with self.db.write() as conn:
            row = conn.execute(select(_pc.status, _pc.submission_id)
                               .where(_pc.id == chain_id)).first()
            if row is None or row.status not in ACTIVE_CHAIN:
                return None if row is None else row.status
            conn.execute(update(process_chains).where(_pc.id == chain_id)
                         .values(priority=priority))
            add_event(conn, row.submission_id, ev.ChainPriority(priority=priority), chain_id)
            return row.status
