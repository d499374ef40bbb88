"""The chain queue (the scheduler's view of the registry): claim the next chain an agent can
run, close its run with the outcome, wake paused chains when they are due."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Iterable, Iterator, Sequence

from sqlalchemy import Connection, bindparam, case, func, insert, select, update

from steepy.model.attempt import REQUEUED as REQUEUED_RUN
from steepy.model.attempt import AttemptRecord
from steepy.model.common import as_utc, iso_time
from steepy.model.submission import ProcessChainStatus
from steepy.registry.connector import Connector
from steepy.registry.interfaces import Claimed, ClaimFor, RunEnd
from steepy.registry.records import (CS, add_event, add_events, chain_record, dump, event_row,
                                     load, utcnow)
from steepy.registry.tables import attempts, process_chains, runs, submissions

CLAIM_BATCH = 64  # REGISTERED chains looked at per claim when capabilities must be matched

# Statements of the hot path (claims and ends of runs), built once: building a statement costs
# more than running it on SQLite. Several ends and claims go in one transaction, each kind of
# statement executed once for all of them (group commit).
_pc = process_chains.c
_CANDIDATES = (select(_pc.id, _pc.required_capabilities).where(_pc.status == CS.REGISTERED)
               .order_by(_pc.priority.desc(), _pc.seq).limit(CLAIM_BATCH))
# `steepy run' claims only the chains of its own submission
_CANDIDATES_OF = _CANDIDATES.where(_pc.submission_id == bindparam("b_sub"))
_CHAINS = select(process_chains).where(_pc.id.in_(bindparam("b_ids", expanding=True)))
# the last run of each chain, and how many runs a chain-level `requeue' took back (they do
# not count against maxAttempts, extensions 11)
_RUNS_SO_FAR = (select(runs.c.chain_id, func.max(runs.c.run_number),
                       func.count(case((runs.c.status == REQUEUED_RUN, 1))))
                .where(runs.c.chain_id.in_(bindparam("b_ids", expanding=True)))
                .group_by(runs.c.chain_id))
_SUBMISSION_OF_CHAIN = select(_pc.submission_id).where(_pc.id == bindparam("b_id"))
_SET_CHAIN = update(process_chains).where(_pc.id == bindparam("b_id"))
_ADD_RUN = insert(runs)
_END_RUN = update(runs).where(runs.c.chain_id == bindparam("b_chain"),
                              runs.c.run_number == bindparam("b_run"))
_ADD_ATTEMPT = insert(attempts)


class _Candidates:
    """REGISTERED chains in the order they are due, fetched only as far as claims need."""

    def __init__(self, result: Any):
        self.result = result
        self.seen: list[Any] = []

    def _rows(self) -> Iterator[Any]:
        yield from self.seen
        for row in self.result:
            self.seen.append(row)
            yield row

    def first(self, offered: frozenset[str], taken: dict[str, str]) -> str | None:
        # most chains need no capabilities: their stored list is the text "[]"
        return next((r.id for r in self._rows() if r.id not in taken and (
            r.required_capabilities == "[]"
            or set(load(r.required_capabilities) or []) <= offered)), None)


class SqlChainQueue:
    def __init__(self, db: Connector):
        self.db = db
        self._candidates = db.dialect.locked(_CANDIDATES)
        self._candidates_of = db.dialect.locked(_CANDIDATES_OF)

    def record(self, ends: Sequence[RunEnd], claims: Sequence[ClaimFor]) -> list[Claimed | None]:
        with self.db.write() as conn:
            if ends:
                self._end(conn, ends)
            return self._claim(conn, claims) if claims else []

    def claim_chain(self, agent_id: str, capabilities: Iterable[str] = (),
                    only: str | None = None) -> Claimed | None:
        """Atomically take the next REGISTERED chain this agent can run (highest priority,
        then oldest; all required capabilities offered; with `only', of that submission).
        It becomes RUNNING with a new run."""
        return self.record((), [ClaimFor(agent_id, frozenset(capabilities), only)])[0]

    def finish_run(self, chain_id: str, run_number: int, run_status: str,
                   chain_status: ProcessChainStatus, *, results: dict | None = None,
                   error_message: str | None = None, attempts: Iterable[AttemptRecord] = (),
                   auto_resume_after: datetime | None = None,
                   claim_next: tuple | None = None,
                   requeued: str | None = None,
                   submission_id: str | None = None) -> Claimed | None:
        """Close a run, store its attempts and move the chain to its next status, at once.
        With `claim_next' (agent id, capabilities, submission or None) the same transaction
        also claims that agent's next chain, which is returned."""
        end = RunEnd(chain_id, run_number, run_status, chain_status, results, error_message,
                     list(attempts), auto_resume_after, requeued, submission_id)
        claims = [] if claim_next is None else [
            ClaimFor(claim_next[0], frozenset(claim_next[1]), *claim_next[2:])]
        got = self.record([end], claims)
        return got[0] if got else None

    @staticmethod
    def _end(conn: Connection, ends: Sequence[RunEnd]) -> None:
        now = utcnow()
        for end in ends:  # the scheduler knows them; others may not
            if end.submission_id is None:
                end.submission_id = conn.execute(_SUBMISSION_OF_CHAIN,
                                                 {"b_id": end.chain_id}).scalar_one()
        conn.execute(_END_RUN, [{"b_chain": e.chain_id, "b_run": e.run_number, "end_time": now,
                                 "status": e.run_status, "error_message": e.error_message,
                                 "auto_resume_after": e.auto_resume_after} for e in ends])
        rows = [{**a.to_row(), "chain_id": e.chain_id, "run_number": e.run_number}
                for e in ends for a in e.attempts]
        if rows:
            conn.execute(_ADD_ATTEMPT, rows)
        conn.execute(_SET_CHAIN, [{
            "b_id": e.chain_id, "status": e.chain_status, "results": dump(e.results),
            "next_run_at": e.auto_resume_after if e.chain_status == CS.PAUSED else None}
            for e in ends])
        add_events(conn, [event_row(
            e.submission_id, "chain.finished", e.chain_id, now, run=e.run_number,
            status=str(e.chain_status), errorMessage=e.error_message,
            resumeAt=iso_time(e.auto_resume_after),
            **({} if e.requeued is None else {"requeued": e.requeued})) for e in ends])

    def _claim(self, conn: Connection, claims: Sequence[ClaimFor]) -> list[Claimed | None]:
        """Each agent gets the first candidate it can run that no agent before it took."""
        candidates: dict[str | None, _Candidates] = {}
        taken: dict[str, str] = {}  # chain id -> agent id
        chosen: list[str | None] = []
        for claim in claims:
            if claim.only not in candidates:
                candidates[claim.only] = _Candidates(
                    conn.execute(self._candidates) if claim.only is None
                    else conn.execute(self._candidates_of, {"b_sub": claim.only}))
            pick = candidates[claim.only].first(claim.capabilities, taken)
            if pick is not None:
                taken[pick] = claim.agent_id
            chosen.append(pick)
        if not taken:
            return [None] * len(claims)
        ids = list(taken)
        rows = {r.id: r for r in conn.execute(_CHAINS, {"b_ids": ids})}
        so_far = {r[0]: (r[1], r[2]) for r in conn.execute(_RUNS_SO_FAR, {"b_ids": ids})}
        now = utcnow()
        numbers = {cid: (so_far.get(cid, (0, 0))[0] or 0) + 1 for cid in ids}
        conn.execute(_SET_CHAIN, [{"b_id": cid, "status": CS.RUNNING, "next_run_at": None,
                                   "waiting": None, "progress": None} for cid in ids])
        conn.execute(_ADD_RUN, [{"chain_id": cid, "run_number": numbers[cid],
                                 "agent_id": agent, "start_time": now}
                                for cid, agent in taken.items()])
        add_events(conn, [event_row(rows[cid].submission_id, "chain.started", cid, now,
                                    run=numbers[cid], agent=agent)
                          for cid, agent in taken.items()])
        claimed: list[Claimed | None] = []
        for cid in chosen:
            if cid is None:
                claimed.append(None)
                continue
            record = chain_record(rows[cid])
            record.status, record.next_run_at = CS.RUNNING, None
            record.requeued_runs = so_far.get(cid, (0, 0))[1] or 0
            claimed.append((record, numbers[cid]))
        return claimed

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
