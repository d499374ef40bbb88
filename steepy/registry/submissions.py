"""The submission store (a controller's view of the registry): the generator's state and the
chains it produced, the outcomes it has not seen yet, and the submission's end."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Iterable

from sqlalchemy import Connection, select, update

from steepy import events as ev
from steepy.model.processchain import ProcessChain
from steepy.model.submission import ACTIVE_CHAIN, FINISHED_CHAIN, WAITING_CHAIN, SubmissionStatus
from steepy.registry.cache import (record_outputs, reused_columns, still_reusable,
                                   store_new_chains)
from steepy.registry.bulk import insert_rows
from steepy.registry.connector import Connector
from steepy.registry.reads import count_chains
from steepy.registry.records import (
    CS,
    ChainRecord,
    add_event,
    add_events,
    chain_record,
    dump,
    event_row,
    load,
    utcnow,
)
from steepy.registry.tables import process_chains, submissions

from steepy.registry.ownership import TakenOver, owned_by

if TYPE_CHECKING:
    from steepy.registry.writes import RoundView, RoundWrite

_pc = process_chains.c


def cancel_waiting_chains(conn: Connection, submission_id: str) -> list[str]:
    """REGISTERED and PAUSED chains of a submission become CANCELLED; returns the ids of its
    RUNNING chains, which their agents must stop."""
    conn.execute(update(submissions).where(submissions.c.id == submission_id)
                 .values(cancel_requested=True))
    waiting = list(conn.execute(select(_pc.id).where(
        _pc.submission_id == submission_id, _pc.status.in_(sorted(WAITING_CHAIN)))).scalars())
    if waiting:
        conn.execute(update(process_chains).where(_pc.id.in_(waiting))
                     .values(status=CS.CANCELLED, next_run_at=None))
    add_event(conn, submission_id, ev.SubmissionCancelRequested(cancelled=len(waiting)))
    return list(conn.execute(select(_pc.id).where(
        _pc.submission_id == submission_id, _pc.status == CS.RUNNING)).scalars())


class SqlSubmissionStore:
    def __init__(self, db: Connector):
        self.db = db

    def saved_state(self, submission_id: str) -> tuple[dict | None, int]:
        """The stored generator state and the controller round it includes."""
        with self.db.read() as conn:
            row = conn.execute(select(submissions.c.generator_state, submissions.c.state_round)
                               .where(submissions.c.id == submission_id)).first()
        return (None, 0) if row is None else (load(row.generator_state), row.state_round or 0)

    def controller_round(self, submission_id: str, write: RoundWrite | None = None,
                         after_round: int | None = None) -> RoundView:
        """Store what a controller's last round learnt, then read what its next one needs,
        in one transaction (a read-only one when there is nothing to store)."""
        from steepy.registry.writes import RoundView

        storing = write is not None and bool(write.fed or write.chains or write.save_state)
        with (self.db.write() if storing else self.db.read()) as conn:
            if storing:
                assert write is not None
                _store_round(conn, submission_id, write)
            row = conn.execute(select(submissions.c.cancel_requested, submissions.c.priority)
                               .where(submissions.c.id == submission_id)).first()
            # whether chains are active BEFORE which finished ones are unfed: on PostgreSQL
            # (READ COMMITTED) each statement sees what was committed when it ran, so a chain
            # that finishes between the two is then seen active, never neither active nor
            # finished (the round would be settled and the submission ended without it)
            active = _has_active(conn, submission_id)
            return RoundView(_unfed(conn, submission_id, after_round),
                             bool(row and row.cancel_requested),
                             None if row is None else row.priority, active)

    def chain_counts(self, submission_id: str) -> dict[str, int]:
        with self.db.reading() as q:
            return count_chains(q, [submission_id])[submission_id]

    def cancel_requested(self, submission_id: str) -> bool:
        with self.db.read() as conn:
            return bool(conn.execute(select(submissions.c.cancel_requested)
                                     .where(submissions.c.id == submission_id)).scalar())

    def cancel_chains(self, submission_id: str) -> list[str]:
        with self.db.write() as conn:
            return cancel_waiting_chains(conn, submission_id)

    def successful_results(self, submission_id: str, mentioning: str | None = None
                           ) -> list[dict]:
        """The results of the submission's successful chains, in order; with `mentioning`,
        only of those whose results contain that text (of 10,000 chains, those that wrote
        below the output path: the rest are neither read nor decoded)."""
        where = [_pc.submission_id == submission_id, _pc.status == CS.SUCCESS]
        if mentioning:  # as it is written in the stored JSON
            where.append(_pc.results.contains(dump(mentioning)[1:-1], autoescape=True))
        with self.db.read() as conn:  # (sorted here: ORDER BY would lead SQLite to walk
            # the successful chains of every submission ever kept, ix_chains_status_seq)
            rows = conn.execute(select(_pc.seq, _pc.results).where(*where)).all()
        return [load(r.results) or {} for r in sorted(rows, key=lambda r: r.seq)]

    def reused_from(self, submission_id: str) -> list[str]:
        with self.db.read() as conn:
            return sorted(conn.execute(select(_pc.reused_from).where(
                _pc.submission_id == submission_id, _pc.reused_from.is_not(None))
                .distinct()).scalars())

    def finish_submission(self, submission_id: str, status: SubmissionStatus,
                          error_message: str | None = None, results: dict | None = None,
                          owner: str | None = None) -> None:
        now = utcnow()  # the end time and its event's time are one (Steep's bus says it)
        with self.db.write() as conn:
            ended = conn.execute(update(submissions).where(
                submissions.c.id == submission_id, *owned_by(owner)).values(
                status=status, error_message=error_message, results=dump(results or None),
                end_time=now))
            if owner is not None and ended.rowcount != 1:
                raise TakenOver(submission_id)
            add_events(conn, [event_row(submission_id, ev.SubmissionStatusChanged(
                status=str(status), error_message=error_message), None, now)])


def _store_round(conn: Connection, submission_id: str, write: RoundWrite) -> None:
    """Mark the fed chains; with `save_state`, also store the new chains (REGISTERED) and the
    generator state that produced them. First, with the write's owner: that the submission
    is still its engine's (the row is locked until the commit on PostgreSQL, so an engine
    taking it over waits, then finds this round stored)."""
    if write.owner is not None and conn.execute(
            update(submissions).where(submissions.c.id == submission_id,
                                      *owned_by(write.owner))
            .values(owner=write.owner)).rowcount != 1:
        raise TakenOver(submission_id)
    _mark_fed(conn, write.fed, write.round_number)
    if write.cache:  # extensions 15: the outputs of chains that succeeded
        record_outputs(conn, write.cache, utcnow())
    if not (write.save_state or write.chains):
        return
    now = utcnow()
    if write.chains:
        still_reusable(conn, write.cache)  # (what the collector took since runs instead)
        reused = reused_columns(write.cache)
        plain = {"status": CS.REGISTERED, "results": None, "reused": None, "reused_from": None,
                 "fed_round": None}
        insert_rows(conn, process_chains, [
            {"id": c.id, "submission_id": submission_id, "priority": c.priority,
             "required_capabilities": dump(c.required_capabilities),
             "chain": dump(c.to_json()), "created_time": now, "cancel_requested": False,
             **reused.get(c.id, plain)} for c in write.chains])
        add_events(conn, _registered(submission_id, write.chains, now))
    if write.cache:  # extensions 15: the keys of the new chains, and those reused
        store_new_chains(conn, submission_id, write.cache, now)
    if write.skipped:  # extensions 10, 11: what a stopped chain left out
        add_events(conn, [event_row(submission_id, ev.SubmissionActionSkipped(
            action_id=action_id, reason=why), None, now) for action_id, why in write.skipped])
    conn.execute(update(submissions).where(submissions.c.id == submission_id)
                 .values(generator_state=dump(write.state), state_round=write.round_number))


def _registered(submission_id: str, chains: Iterable[ProcessChain], now: datetime
                ) -> list[dict]:
    """The `chain.registered' event of each new chain. Their data differs only by the number
    of executables: one event and one JSON text for each number, not for each chain (10,000
    chains: 0.04 s instead of 0.09 s)."""
    made: dict[int, dict] = {}
    rows = []
    for chain in chains:
        count = len(chain.executables)
        row = made.get(count)
        if row is None:
            row = made[count] = event_row(submission_id, ev.ChainRegistered(executables=count),
                                          None, now)
        rows.append({**row, "chain_id": chain.id})  # (the key keeps its place)
    return rows


def _unfed(conn: Connection, submission_id: str, after_round: int | None) -> list[ChainRecord]:
    not_fed = _pc.fed_round.is_(None)
    if after_round is not None:
        not_fed = not_fed | (_pc.fed_round > after_round)
    rows = conn.execute(select(process_chains).where(
        _pc.submission_id == submission_id, not_fed,
        _pc.status.in_(sorted(FINISHED_CHAIN)))).all()
    # sorted here: ORDER BY would lead SQLite to walk all the submission's chains
    return [chain_record(r) for r in sorted(rows, key=lambda r: r.seq)]


def _has_active(conn: Connection, submission_id: str) -> bool:
    """Whether a chain of the submission is still to run or running: an index lookup, where
    counting would read every chain of a large submission each round."""
    return conn.execute(select(_pc.id).where(
        _pc.submission_id == submission_id,
        _pc.status.in_(sorted(ACTIVE_CHAIN))).limit(1)).first() is not None


def _mark_fed(conn: Connection, chain_ids: Iterable[str], round_number: int) -> None:
    ids = list(chain_ids)
    if ids:
        conn.execute(update(process_chains).where(_pc.id.in_(ids)).values(fed_round=round_number))
