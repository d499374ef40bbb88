"""The chain queue (the scheduler's view of the registry): claim the next chain an agent can
run, close its run with the outcome, wake paused chains when they are due."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any, Iterable, Iterator, Sequence

from sqlalchemy import Connection, bindparam, func, select, update

from steepy import events as ev
from steepy.events import Event
from steepy.model.attempt import INTERRUPTED, AttemptRecord
from steepy.model.common import as_utc
from steepy.model.processchain import ProcessChain
from steepy.model.submission import ProcessChainStatus
from steepy.registry.connector import Connector
from steepy.registry.hotpath import CLAIM_WINDOW, HotPath
from steepy.registry.writes import AttemptWrite, Claimed, ClaimFor, RunEnd
from steepy.registry.records import (CS, ChainRecord, add_event, add_events, event_row, load,
                                     utcnow)
from steepy.registry.attempts import close_cut_attempts, cut_history
from steepy.registry.tables import process_chains, runs, submissions

log = logging.getLogger(__name__)

_pc = process_chains.c
_SUBMISSION_OF_CHAIN = select(_pc.submission_id).where(_pc.id == bindparam("b_id"))
FIRST_WAKE_UP = select(func.min(_pc.next_run_at)).where(_pc.status == CS.PAUSED)
# what a claim looks at (`HotPath.candidates`): the capabilities the first chains need
WAITING = (select(_pc.required_capabilities).where(_pc.status == CS.REGISTERED)
            .order_by(_pc.priority.desc(), _pc.seq).limit(CLAIM_WINDOW))


class _Candidates:
    """REGISTERED chains in the order they are due, fetched only as far as claims need."""

    def __init__(self, rows: Any):
        self.rows = rows
        self.seen: list[tuple[str, str]] = []

    def _all(self) -> Iterator[tuple[str, str]]:
        yield from self.seen
        while (row := self.rows.fetchone()) is not None:
            self.seen.append(row)
            yield row

    def first(self, offered: frozenset[str], taken: dict[str, str]) -> str | None:
        return next((cid for cid, required in self._all()
                     if cid not in taken and can_run(required, offered)), None)


def can_run(required: str, offered: frozenset[str]) -> bool:
    """Whether an agent offering `offered' may run a chain whose stored capabilities are
    `required' (most chains need none: their stored list is the text "[]")."""
    return required == "[]" or set(load(required) or []) <= offered


class SqlChainQueue:
    def __init__(self, db: Connector):
        self.db = db
        self.hot = HotPath(db.dialect.postgres)  # claims and ends: the driver's own terms

    def record(self, ends: Sequence[RunEnd], claims: Sequence[ClaimFor],
               attempts: Sequence[AttemptWrite] = ()) -> list[Claimed | None]:
        """Store these attempts, close these runs and claim chains for these agents, in one
        transaction. What needs no answer first (the attempts, the ends, the claims'
        candidates) goes in one batch: one round trip on PostgreSQL. (The submissions of
        ends that do not say theirs are looked up before.)"""
        with self.db.write() as conn:
            if ends:
                self._submissions_known(conn, ends)
            cur = self.hot.cursor(conn)
            cursors = [cur]
            try:
                candidates: dict[frozenset[str] | None, _Candidates] = {}
                now = utcnow()  # (a run's end and its event's time are one)
                with self.hot.batch(cur):
                    if attempts:
                        self.hot.put_attempts(cur, ({**a.row, "chain_id": a.chain_id,
                                                     "run_number": a.run_number}
                                                    for a in attempts))
                    still_open = None
                    if ends:
                        cursors.append(self.hot.cursor(conn))
                        still_open = self.hot.end(cur, cursors[-1], ends, now)
                    for claim in claims:  # (each kind once: most claims are alike)
                        if claim.only not in candidates:
                            cursors.append(self.hot.cursor(conn))
                            candidates[claim.only] = _Candidates(
                                self.hot.candidates(cursors[-1], claim.only))
                if still_open is not None:
                    self._ended(conn, ends, still_open(), now)
                return self._claim(conn, claims, candidates) if claims else []
            finally:
                for cursor in cursors:
                    cursor.close()

    def claim_chain(self, agent_id: str, capabilities: Iterable[str] = (),
                    only: str | None = None) -> Claimed | None:
        """Atomically take the next REGISTERED chain this agent can run (highest priority,
        then oldest; all required capabilities offered; with `only', of that submission).
        It becomes RUNNING with a new run."""
        return self.record((), [ClaimFor(agent_id, frozenset(capabilities),
                                         None if only is None else frozenset({only}))])[0]

    def finish_run(self, chain_id: str, run_number: int, run_status: str,
                   chain_status: ProcessChainStatus, *, results: dict | None = None,
                   error_message: str | None = None, attempts: Iterable[AttemptRecord] = (),
                   auto_resume_after: datetime | None = None,
                   requeued: str | None = None,
                   submission_id: str | None = None) -> None:
        """Close a run, store its attempts and move the chain to its next status, at once."""
        self.record([RunEnd(chain_id, run_number, run_status, chain_status, results,
                            error_message, list(attempts), auto_resume_after, requeued,
                            submission_id)], [])

    def _submissions_known(self, conn: Connection, ends: Sequence[RunEnd]) -> None:
        for end in ends:  # the scheduler knows them; others may not
            if end.submission_id is None:
                end.submission_id = conn.execute(_SUBMISSION_OF_CHAIN,
                                                 {"b_id": end.chain_id}).scalar_one()

    def _ended(self, conn: Connection, ends: Sequence[RunEnd], still_open: set[tuple[str, int]],
               now: datetime) -> None:
        """The events of the runs `HotPath.end` closed; a word on those it found closed."""
        late = [e for e in ends if (e.chain_id, e.run_number) not in still_open]
        for e in late:
            log.warning("the end of run %s of chain %s came after another engine had counted "
                        "its agent lost and closed it: not recorded", e.run_number, e.chain_id)
        ends = [e for e in ends if (e.chain_id, e.run_number) in still_open] if late else ends
        add_events(conn, [event_row(e.submission_id, ev.ChainFinished(
            run=e.run_number, status=str(e.chain_status), error_message=e.error_message,
            resume_at=e.auto_resume_after, requeued=e.requeued), e.chain_id, now) for e in ends])

    def _claim(self, conn: Connection, claims: Sequence[ClaimFor],
               candidates: dict[frozenset[str] | None, _Candidates]) -> list[Claimed | None]:
        """Each agent gets the first of its `candidates` it can run that no agent before it
        took."""
        taken: dict[str, str] = {}  # chain id -> agent id
        chosen: list[str | None] = []
        for claim in claims:
            pick = candidates[claim.only].first(claim.capabilities, taken)
            if pick is not None:
                taken[pick] = claim.agent_id
            chosen.append(pick)
        if not taken:
            return [None] * len(claims)
        cur = self.hot.cursor(conn)
        try:
            ids = list(taken)
            now = utcnow()
            rows, so_far = self.hot.take(cur, taken, now)
            numbers = {cid: so_far.get(cid, (0, 0, 0))[0] + 1 for cid in ids}
        finally:
            cur.close()
        add_events(conn, [event_row(rows[cid][0], ev.ChainStarted(run=numbers[cid], agent=agent),
                                    cid, now)
                          for cid, agent in taken.items()])
        histories = {cid: cut_history(conn, cid, numbers[cid] - 1) for cid in ids
                     if so_far.get(cid, (0, 0, 0))[2]}
        claimed: list[Claimed | None] = []
        for cid in chosen:
            if cid is None:
                claimed.append(None)
                continue
            submission_id, chain, results, seq = rows[cid]
            claimed.append((ChainRecord(
                chain=ProcessChain.from_json(load(chain)), submission_id=submission_id,
                status=CS.RUNNING, results=load(results), next_run_at=None, seq=seq,
                requeued_runs=so_far.get(cid, (0, 0, 0))[1],
                history=histories.get(cid, [])), numbers[cid]))
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
            if conn.execute(update(runs).where(runs.c.chain_id == chain_id,
                                               runs.c.run_number == run_number,
                                               runs.c.end_time.is_(None))
                            .values(end_time=utcnow(),
                                    status="CANCELLED" if cancelled else INTERRUPTED,
                                    error_message=None if cancelled else reason)).rowcount != 1:
                return  # closed already (another engine counted its agent lost): not ours
            close_cut_attempts(conn, chain_id, run_number, INTERRUPTED, f"cut: {reason}",
                               stopped=not cancelled)
            conn.execute(update(process_chains).where(_pc.id == chain_id)
                         .values(status=CS.CANCELLED if cancelled else CS.REGISTERED))
            add_event(conn, row.submission_id, ev.ChainRequeued(
                run=run_number, reason=reason,
                status=str(CS.CANCELLED if cancelled else CS.REGISTERED)), chain_id)

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
                add_event(conn, submission_id, ev.ChainResumed(), chain_id)
        return [r[0] for r in rows]

    def outlook(self, claims: Sequence[ClaimFor]) -> tuple[bool, datetime | None]:
        """One read, no write lock: whether any of these claims would get a chain now (among
        the first CLAIM_WINDOW REGISTERED chains of its submissions, as `record` looks), and
        the earliest wake-up time of a PAUSED chain. An idle scheduler claims only when the
        first is true, so a sweep that finds nothing writes nothing (and, on PostgreSQL,
        wakes no other process with its notification)."""
        with self.db.read() as conn:
            wake_up = as_utc(conn.execute(FIRST_WAKE_UP).scalar())
            looked: dict[frozenset[str] | None, list[str]] = {}
            for claim in claims:
                if claim.only not in looked:
                    query = WAITING if claim.only is None else WAITING.where(
                        _pc.submission_id.in_(sorted(claim.only)))
                    looked[claim.only] = list(conn.execute(query).scalars())
                if any(can_run(required, claim.capabilities)
                       for required in looked[claim.only]):
                    return True, wake_up
        return False, wake_up

    def next_wake_up(self) -> datetime | None:
        with self.db.read() as conn:
            return as_utc(conn.execute(FIRST_WAKE_UP).scalar())

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
                add_event(conn, submission_id, ev.ChainProgress(progress=progress), chain_id)

    def add_event(self, submission_id: str | None, event: Event,
                  chain_id: str | None = None) -> None:
        with self.db.write() as conn:
            add_event(conn, submission_id, event, chain_id)

