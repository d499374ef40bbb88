"""The chain queue (the scheduler's view of the registry): claim the next chain an agent can
run, close its run with the outcome, wake paused chains when they are due."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Iterable

from sqlalchemy import Connection, bindparam, func, insert, select, update

from steepy.model.attempt import REQUEUED as REQUEUED_RUN
from steepy.model.attempt import AttemptRecord
from steepy.model.common import as_utc, iso_time
from steepy.model.submission import ProcessChainStatus
from steepy.registry.connector import Connector
from steepy.registry.interfaces import Claimed
from steepy.registry.records import CS, add_event, chain_record, dump, load, utcnow
from steepy.registry.tables import attempts, process_chains, runs, submissions

CLAIM_BATCH = 64  # REGISTERED chains looked at per claim when capabilities must be matched

# Statements of the hot path (a claim and a finish per chain), built once: building a
# statement costs more than running it on SQLite
_pc = process_chains.c
_CANDIDATES = (select(_pc.id, _pc.required_capabilities).where(_pc.status == CS.REGISTERED)
               .order_by(_pc.priority.desc(), _pc.seq).limit(CLAIM_BATCH))
# `steepy run' claims only the chains of its own submission
_CANDIDATES_OF = _CANDIDATES.where(_pc.submission_id == bindparam("b_sub"))
_CHAIN_AND_LAST_RUN = select(
    process_chains, select(func.max(runs.c.run_number)).where(runs.c.chain_id == bindparam("b_id"))
    .scalar_subquery().label("last_run"),
    # runs a chain-level `requeue' took back do not count against maxAttempts (extensions 11)
    select(func.count()).where(runs.c.chain_id == bindparam("b_id"), runs.c.status == REQUEUED_RUN)
    .scalar_subquery().label("requeued_runs")).where(_pc.id == bindparam("b_id"))
_SUBMISSION_OF_CHAIN = select(_pc.submission_id).where(_pc.id == bindparam("b_id"))
_SET_CHAIN = update(process_chains).where(_pc.id == bindparam("b_id"))
_ADD_RUN = insert(runs)
_END_RUN = update(runs).where(runs.c.chain_id == bindparam("b_chain"),
                              runs.c.run_number == bindparam("b_run"))
_ADD_ATTEMPT = insert(attempts)


class SqlChainQueue:
    def __init__(self, db: Connector):
        self.db = db
        self._candidates = db.dialect.locked(_CANDIDATES)
        self._candidates_of = db.dialect.locked(_CANDIDATES_OF)

    def claim_chain(self, agent_id: str, capabilities: Iterable[str] = (),
                    only: str | None = None) -> Claimed | None:
        """Atomically take the next REGISTERED chain this agent can run (highest priority,
        then oldest; all required capabilities offered; with `only', of that submission).
        It becomes RUNNING with a new run."""
        with self.db.write() as conn:
            return self._claim(conn, agent_id, set(capabilities), only)

    def _claim(self, conn: Connection, agent_id: str, offered: set[str],
               only: str | None = None) -> Claimed | None:
        if only is None:
            candidates = conn.execute(self._candidates)
        else:
            candidates = conn.execute(self._candidates_of, {"b_sub": only})
        # most chains need no capabilities: their stored list is the text "[]"
        chosen = next((r.id for r in candidates
                       if r.required_capabilities == "[]"
                       or set(load(r.required_capabilities) or []) <= offered), None)
        if chosen is None:
            return None
        row = conn.execute(_CHAIN_AND_LAST_RUN, {"b_id": chosen}).one()
        run_number = (row.last_run or 0) + 1
        conn.execute(_SET_CHAIN, {"b_id": chosen, "status": CS.RUNNING, "next_run_at": None,
                                  "waiting": None, "progress": None})
        conn.execute(_ADD_RUN, {"chain_id": chosen, "run_number": run_number,
                                "agent_id": agent_id, "start_time": utcnow()})
        add_event(conn, row.submission_id, "chain.started", chosen, run=run_number,
                  agent=agent_id)
        record = chain_record(row)
        record.status, record.next_run_at = CS.RUNNING, None
        return record, run_number

    def finish_run(self, chain_id: str, run_number: int, run_status: str,
                   chain_status: ProcessChainStatus, *, results: dict | None = None,
                   error_message: str | None = None, attempts: Iterable[AttemptRecord] = (),
                   auto_resume_after: datetime | None = None,
                   claim_next: tuple | None = None,
                   requeued: str | None = None,
                   submission_id: str | None = None) -> Claimed | None:
        """Close a run, store its attempts and move the chain to its next status, at once.
        With `claim_next' (agent id, capabilities, submission or None) the same transaction
        also claims that agent's next chain, which is returned. `requeued' says why a
        chain-level re-queue took the run back (its status is REQUEUED; extensions 11).
        `submission_id', the chain's (when the caller knows it), saves looking it up."""
        with self.db.write() as conn:
            if submission_id is None:
                submission_id = conn.execute(_SUBMISSION_OF_CHAIN, {"b_id": chain_id}).scalar_one()
            conn.execute(_END_RUN, {"b_chain": chain_id, "b_run": run_number, "end_time": utcnow(),
                                    "status": run_status, "error_message": error_message,
                                    "auto_resume_after": auto_resume_after})
            rows = [{**a.to_row(), "chain_id": chain_id, "run_number": run_number}
                    for a in attempts]
            if rows:
                conn.execute(_ADD_ATTEMPT, rows)
            conn.execute(_SET_CHAIN, {
                "b_id": chain_id, "status": chain_status, "results": dump(results),
                "next_run_at": auto_resume_after if chain_status == CS.PAUSED else None})
            extra = {} if requeued is None else {"requeued": requeued}
            add_event(conn, submission_id, "chain.finished", chain_id, run=run_number,
                      status=str(chain_status), errorMessage=error_message,
                      resumeAt=iso_time(auto_resume_after), **extra)
            if claim_next is not None:
                return self._claim(conn, claim_next[0], set(claim_next[1]), *claim_next[2:])
        return None

    def requeue_run(self, chain_id: str, run_number: int, reason: str) -> None:
        """An engine shutting down gives a chain back: the run ends INTERRUPTED, the chain is
        REGISTERED again for whoever runs next."""
        with self.db.write() as conn:
            row = conn.execute(
                select(_pc.submission_id, _pc.cancel_requested,
                       submissions.c.cancel_requested.label("submission_cancel"))
                .join(submissions, submissions.c.id == _pc.submission_id)
                .where(_pc.id == chain_id)).one()
            # a chain whose cancellation was asked for stays cancelled
            cancelled = row.cancel_requested or row.submission_cancel
            conn.execute(update(runs).where(runs.c.chain_id == chain_id,
                                            runs.c.run_number == run_number)
                         .values(end_time=utcnow(), status="CANCELLED" if cancelled else "INTERRUPTED",
                                 error_message=None if cancelled else reason))
            conn.execute(update(process_chains).where(_pc.id == chain_id)
                         .values(status=CS.CANCELLED if cancelled else CS.REGISTERED))
            add_event(conn, row.submission_id, "chain.requeued", chain_id, run=run_number,
                      reason=reason, status=str(CS.CANCELLED if cancelled else CS.REGISTERED))

    def resume_due_chains(self, now: datetime | None = None) -> list[str]:
        """PAUSED chains whose wake-up time has passed (strictly) become REGISTERED."""
        now = now or utcnow()
        due = select(_pc.id, _pc.submission_id).where(
            _pc.status == CS.PAUSED, _pc.next_run_at.is_not(None), _pc.next_run_at < now)
        with self.db.read() as conn:  # usually nothing is due: don't take the write lock
            if not conn.execute(due.limit(1)).first():
                return []
        with self.db.write() as conn:
            rows = conn.execute(due).all()
            for chain_id, submission_id in rows:
                conn.execute(update(process_chains).where(_pc.id == chain_id)
                             .values(status=CS.REGISTERED, next_run_at=None))
                add_event(conn, submission_id, "chain.resumed", chain_id)
        return [r[0] for r in rows]

    def next_wake_up(self) -> datetime | None:
        with self.db.read() as conn:
            return as_utc(conn.execute(select(func.min(_pc.next_run_at))
                                       .where(_pc.status == CS.PAUSED)).scalar())

    def chains_to_stop(self, chain_ids: Iterable[str]) -> list[str]:
        """Of these RUNNING chains, those whose cancellation was requested (chain or submission)."""
        ids = list(chain_ids)
        if not ids:
            return []
        with self.db.read() as conn:
            rows = conn.execute(
                select(_pc.id).join(submissions, submissions.c.id == _pc.submission_id)
                .where(_pc.id.in_(ids), _pc.cancel_requested | submissions.c.cancel_requested)
            ).all()
        return [r.id for r in rows]

    def set_progress(self, submission_id: str, chain_id: str, progress: float) -> None:
        """A RUNNING chain's agent estimates it is this far (0..1)."""
        with self.db.write() as conn:
            changed = conn.execute(update(process_chains).where(
                _pc.id == chain_id, _pc.status == CS.RUNNING).values(progress=progress))
            if changed.rowcount:
                add_event(conn, submission_id, "chain.progress", chain_id, progress=progress)

    def add_event(self, submission_id: str, kind: str, chain_id: str | None = None,
                  **data: Any) -> None:
        with self.db.write() as conn:
            add_event(conn, submission_id, kind, chain_id, **data)
