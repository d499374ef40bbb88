"""The registry: every submission, process chain, run, attempt and event, stored durably.

Each method is one transaction, so a state change and its timeline event are committed
together before anyone acts on them.
"""

from __future__ import annotations

import json
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Iterable, Iterator

from sqlalchemy import (Connection, Engine, and_, bindparam, event, func, insert, select,
                        update)

from steepy.model.attempt import AttemptRecord
from steepy.model.common import as_utc as _utc
from steepy.model.common import iso_time
from steepy.model.processchain import ProcessChain
from steepy.model.submission import (FINISHED_CHAIN, RETRYABLE_SUBMISSION, WAITING_CHAIN,
                                     ProcessChainStatus, Submission, SubmissionStatus)
from steepy.model.workflow import Workflow
from steepy.registry.tables import agents, attempts, events, process_chains, runs, submissions

CS = ProcessChainStatus
SS = SubmissionStatus
CHANNEL = "steepy_changes"  # PostgreSQL notification channel of every write
CLAIM_BATCH = 64  # REGISTERED chains looked at per claim when capabilities must be matched

# Statements of the hot path (a claim and a finish per chain), built once: building a
# statement costs more than running it on SQLite
_pc = process_chains.c
_CANDIDATES = (select(_pc.id, _pc.required_capabilities).where(_pc.status == CS.REGISTERED)
               .order_by(_pc.priority.desc(), _pc.seq).limit(CLAIM_BATCH))
_CANDIDATES_LOCKED = _CANDIDATES.with_for_update(skip_locked=True)
# `steepy run' claims only the chains of its own submission
_CANDIDATES_OF = _CANDIDATES.where(_pc.submission_id == bindparam("b_sub"))
_CANDIDATES_OF_LOCKED = _CANDIDATES_OF.with_for_update(skip_locked=True)
_CHAIN_AND_LAST_RUN = select(
    process_chains, select(func.max(runs.c.run_number)).where(runs.c.chain_id == bindparam("b_id"))
    .scalar_subquery().label("last_run")).where(_pc.id == bindparam("b_id"))
_SUBMISSION_OF_CHAIN = select(_pc.submission_id).where(_pc.id == bindparam("b_id"))
_SET_CHAIN = update(process_chains).where(_pc.id == bindparam("b_id"))
_ADD_RUN = insert(runs)
_END_RUN = update(runs).where(runs.c.chain_id == bindparam("b_chain"),
                              runs.c.run_number == bindparam("b_run"))
_ADD_ATTEMPT = insert(attempts)
_ADD_EVENT = insert(events)


def utcnow() -> datetime:
    return datetime.now(timezone.utc)




def _dump(value: Any) -> str | None:
    return None if value is None else json.dumps(value, separators=(",", ":"))


def _load(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def waiting_reason(required: Iterable[str], offers: list[set[str]]) -> str | None:
    """Why a chain requiring these capabilities cannot start on any of these agents."""
    required = set(required)
    if any(required <= o for o in offers):
        return None
    missing = required - set().union(*offers) if offers else required
    if not offers:
        return "waiting: no agent is running"
    if missing:
        return "waiting: no agent offers " + ", ".join(sorted(missing))
    return "waiting: no agent offers " + " and ".join(sorted(required)) + " together"


def _event_row(submission_id: str, kind: str, chain_id: str | None, time: datetime,
               **data: Any) -> dict:
    return {"submission_id": submission_id, "chain_id": chain_id, "time": time, "kind": kind,
            "data": _dump({k: v for k, v in data.items() if v is not None})}


@dataclass
class ChainRecord:
    """A process chain as stored, with its registry fields."""

    chain: ProcessChain
    submission_id: str
    status: ProcessChainStatus
    results: dict | None
    next_run_at: datetime | None
    seq: int
    waiting: str | None = None  # why it cannot start (REGISTERED only)


@dataclass
class RunRecord:
    chain_id: str
    run_number: int
    agent_id: str | None
    start_time: datetime
    end_time: datetime | None
    status: str | None
    error_message: str | None
    auto_resume_after: datetime | None

    def to_json(self) -> dict:
        out: dict[str, Any] = {"runNumber": self.run_number, "agentId": self.agent_id,
                               "startTime": iso_time(self.start_time)}
        for key, value in (("endTime", iso_time(self.end_time)), ("status", self.status),
                           ("errorMessage", self.error_message),
                           ("autoResumeAfter", iso_time(self.auto_resume_after))):
            if value is not None:
                out[key] = value
        return out


class Registry:
    def __init__(self, engine: Engine):
        self.engine = engine
        self._watch: Any = None  # a connection of its own for data_version (SQLite)
        self.commits = 0  # write transactions committed through this registry
        self._write_lock = threading.Lock()
        self._postgres = engine.dialect.name == "postgresql"
        self._notified = 0  # notifications received on the LISTEN connection (PostgreSQL)
        event.listen(engine, "commit", self._committed)

    def _committed(self, conn: Connection) -> None:
        if not conn.get_execution_options().get("read_only"):
            self.commits += 1

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """A write transaction. Threads of this process queue on a lock of their own: waiting
        in SQLite's busy handler would sleep in steps of milliseconds."""
        with self._write_lock, self.engine.begin() as conn:
            yield conn
            if self._postgres:  # delivered on commit to every listening engine
                conn.exec_driver_sql(f"NOTIFY {CHANNEL}")

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A read-only transaction: a consistent snapshot without the write lock."""
        with self.engine.connect() as conn:
            conn.execution_options(read_only=True)
            with conn.begin():
                yield conn

    def change_marker(self) -> int | None:
        """A number that changes whenever another connection commits, so a process can
        notice new work at once: SQLite's data_version, or the count of notifications on
        PostgreSQL (every write transaction sends one). None where neither is available."""
        if self.engine.dialect.name not in ("sqlite", "postgresql"):
            return None
        if self._watch is None:
            # a connection of its own, kept for the life of the registry
            self._watch = self.engine.raw_connection()
            if self._postgres:
                listener = self._watch.driver_connection
                listener.autocommit = True
                listener.execute(f"LISTEN {CHANNEL}")
        if self._postgres:
            self._notified += sum(1 for _ in self._watch.driver_connection.notifies(timeout=0))
            return self._notified
        cursor = self._watch.cursor()
        try:
            cursor.execute("PRAGMA data_version")
            return int(cursor.fetchone()[0])
        finally:
            cursor.close()

    def forget_watch(self) -> None:
        """Drop the watching connection (it failed); the next change_marker opens another."""
        watch, self._watch = self._watch, None
        if watch is not None:
            try:
                watch.invalidate()
            except Exception:  # noqa: BLE001 - it is broken already
                pass

    # ------------------------------------------------------------------ events

    def _event(self, conn: Connection, submission_id: str, kind: str,
               chain_id: str | None = None, **data: Any) -> None:
        conn.execute(_ADD_EVENT, _event_row(submission_id, kind, chain_id, utcnow(), **data))

    def add_event(self, submission_id: str, kind: str, chain_id: str | None = None,
                  **data: Any) -> None:
        with self.write() as conn:
            self._event(conn, submission_id, kind, chain_id, **data)

    def events(self, submission_id: str, after: int = 0) -> list[dict]:
        with self.read() as conn:
            rows = conn.execute(select(events).where(events.c.submission_id == submission_id,
                                                     events.c.id > after)
                                .order_by(events.c.id)).all()
        return [{"id": r.id, "time": iso_time(_utc(r.time)), "kind": r.kind,
                 **({"chainId": r.chain_id} if r.chain_id else {}), **(_load(r.data) or {})}
                for r in rows]

    # ------------------------------------------------------------------ submissions

    def add_submission(self, submission: Submission) -> None:
        with self.write() as conn:
            conn.execute(insert(submissions).values(
                id=submission.id, name=submission.name, priority=submission.priority,
                workflow_priority=submission.workflow.priority, status=str(submission.status),
                workflow=_dump(submission.workflow.to_json()), source=submission.source,
                required_capabilities=_dump(list(submission.required_capabilities)),
                created_time=utcnow(), cancel_requested=False))
            self._event(conn, submission.id, "submission.status", status=str(submission.status))

    def _submission(self, row: Any) -> Submission:
        return Submission(
            id=row.id, workflow=Workflow.from_json(_load(row.workflow)), name=row.name,
            priority=row.priority, status=SS(row.status), start_time=_utc(row.start_time),
            end_time=_utc(row.end_time),
            required_capabilities=_load(row.required_capabilities) or [],
            source=row.source, error_message=row.error_message, results=_load(row.results))

    def get_submission(self, submission_id: str) -> Submission | None:
        with self.read() as conn:
            row = conn.execute(select(submissions).where(submissions.c.id == submission_id)).first()
        return None if row is None else self._submission(row)

    def list_submissions(self, status: str | None = None, size: int = 10,
                         offset: int = 0) -> tuple[list[Submission], int]:
        """Newest first, with the total count (for paging)."""
        where = [] if status is None else [submissions.c.status == status]
        with self.read() as conn:
            total = conn.execute(select(func.count()).select_from(submissions).where(*where)).scalar()
            rows = conn.execute(select(submissions).where(*where).order_by(submissions.c.seq.desc())
                                .limit(size).offset(max(0, offset))).all()
        return [self._submission(r) for r in rows], int(total or 0)

    def fetch_next_submission(self, owner: str = "", lease_s: float = 30,
                              only: str | None = None) -> Submission | None:
        """Atomically take the ACCEPTED submission to run next (with `only', that one or
        none): highest workflow priority, then oldest. It becomes RUNNING, leased to `owner'."""
        accepted = [submissions.c.status == SS.ACCEPTED]
        if only is not None:
            accepted.append(submissions.c.id == only)
        with self.read() as conn:  # most calls find nothing: don't take the write lock
            if conn.execute(select(submissions.c.id).where(*accepted).limit(1)).first() is None:
                return None
        with self.write() as conn:
            query = (select(submissions).where(*accepted)
                     .order_by(submissions.c.priority.desc(), submissions.c.seq).limit(1))
            if conn.dialect.name == "postgresql":
                query = query.with_for_update(skip_locked=True)
            row = conn.execute(query).first()
            if row is None:
                return None
            now = utcnow()
            conn.execute(update(submissions).where(submissions.c.id == row.id).values(
                status=SS.RUNNING, start_time=now, owner=owner,
                lease_until=now + timedelta(seconds=lease_s)))
            self._event(conn, row.id, "submission.status", status=str(SS.RUNNING))
            row = conn.execute(select(submissions).where(submissions.c.id == row.id)).first()
        return self._submission(row)

    def submission_ids(self, status: SubmissionStatus) -> list[str]:
        with self.read() as conn:
            return list(conn.execute(select(submissions.c.id).where(submissions.c.status == status)
                                     .order_by(submissions.c.seq)).scalars())

    def finish_submission(self, submission_id: str, status: SubmissionStatus,
                          error_message: str | None = None, results: dict | None = None) -> None:
        with self.write() as conn:
            conn.execute(update(submissions).where(submissions.c.id == submission_id).values(
                status=status, error_message=error_message, results=_dump(results or None),
                end_time=utcnow()))
            self._event(conn, submission_id, "submission.status", status=str(status),
                        errorMessage=error_message)

    def submission_priority(self, submission_id: str) -> int | None:
        with self.read() as conn:
            return conn.execute(select(submissions.c.priority)
                                .where(submissions.c.id == submission_id)).scalar()

    def saved_state(self, submission_id: str) -> tuple[dict | None, int]:
        """The stored generator state and the controller round it includes."""
        with self.read() as conn:
            row = conn.execute(select(submissions.c.generator_state, submissions.c.state_round)
                               .where(submissions.c.id == submission_id)).first()
        return (None, 0) if row is None else (_load(row.generator_state), row.state_round or 0)

    # ------------------------------------------------------------------ process chains

    def add_chains(self, submission_id: str, chains: list[ProcessChain],
                   generator_state: dict | None, fed: Iterable[str] = (),
                   round_number: int = 0) -> None:
        """Store new REGISTERED chains and the generator state that produced them, together.
        `fed' are the finished chains handed to the generator in round `round_number', which
        the stored state now includes."""
        now = utcnow()
        with self.write() as conn:
            self._mark_fed(conn, fed, round_number)
            if chains:
                conn.execute(insert(process_chains), [
                    {"id": c.id, "submission_id": submission_id, "status": CS.REGISTERED,
                     "priority": c.priority, "required_capabilities": _dump(c.required_capabilities),
                     "chain": _dump(c.to_json()), "created_time": now,
                     "cancel_requested": False}
                    for c in chains])
                conn.execute(_ADD_EVENT, [
                    _event_row(submission_id, "chain.registered", c.id, now,
                               executables=len(c.executables)) for c in chains])
            conn.execute(update(submissions).where(submissions.c.id == submission_id)
                         .values(generator_state=_dump(generator_state), state_round=round_number))

    def mark_fed(self, chain_ids: Iterable[str], round_number: int) -> None:
        """Finished chains handed to the generator in a round whose state is not stored (yet):
        after a crash they are handed over again."""
        with self.write() as conn:
            self._mark_fed(conn, chain_ids, round_number)

    @staticmethod
    def _mark_fed(conn: Connection, chain_ids: Iterable[str], round_number: int) -> None:
        ids = list(chain_ids)
        if ids:
            conn.execute(update(process_chains).where(process_chains.c.id.in_(ids))
                         .values(fed_round=round_number))

    def _chain(self, row: Any) -> ChainRecord:
        return ChainRecord(chain=ProcessChain.from_json(_load(row.chain)),
                           submission_id=row.submission_id, status=CS(row.status),
                           results=_load(row.results), next_run_at=_utc(row.next_run_at),
                           seq=row.seq,
                           waiting=row.waiting if row.status == CS.REGISTERED else None)

    def get_chain(self, chain_id: str) -> ChainRecord | None:
        with self.read() as conn:
            row = conn.execute(select(process_chains).where(process_chains.c.id == chain_id)).first()
        return None if row is None else self._chain(row)

    def list_chains(self, submission_id: str | None = None, status: str | None = None,
                    size: int | None = None, offset: int = 0) -> tuple[list[ChainRecord], int]:
        where = []
        if submission_id is not None:
            where.append(process_chains.c.submission_id == submission_id)
        if status is not None:
            where.append(process_chains.c.status == status)
        with self.read() as conn:
            total = conn.execute(select(func.count()).select_from(process_chains).where(*where)).scalar()
            query = select(process_chains).where(*where).order_by(process_chains.c.seq.desc())
            if size is not None:
                query = query.limit(size).offset(max(0, offset))
            rows = conn.execute(query).all()
        return [self._chain(r) for r in rows], int(total or 0)

    def waiting_counts(self, submission_id: str) -> dict[str, int]:
        """REGISTERED chains of a submission that cannot start, by reason."""
        with self.read() as conn:
            rows = conn.execute(select(_pc.waiting, func.count()).where(
                _pc.submission_id == submission_id, _pc.status == CS.REGISTERED,
                _pc.waiting.is_not(None)).group_by(_pc.waiting)).all()
        return {reason: count for reason, count in rows}

    def chain_counts(self, submission_id: str) -> dict[str, int]:
        with self.read() as conn:
            rows = conn.execute(select(process_chains.c.status, func.count())
                                .where(process_chains.c.submission_id == submission_id)
                                .group_by(process_chains.c.status)).all()
        return {status: count for status, count in rows}

    def claim_chain(self, agent_id: str, capabilities: Iterable[str] = (),
                    only: str | None = None) -> tuple[ChainRecord, int] | None:
        """Atomically take the next REGISTERED chain this agent can run (highest priority,
        then oldest; all required capabilities offered; with `only', of that submission).
        It becomes RUNNING with a new run."""
        with self.write() as conn:
            return self._claim(conn, agent_id, set(capabilities), only)

    def _claim(self, conn: Connection, agent_id: str, offered: set[str],
               only: str | None = None) -> tuple[ChainRecord, int] | None:
        locked = conn.dialect.name == "postgresql"
        if only is None:
            candidates = conn.execute(_CANDIDATES_LOCKED if locked else _CANDIDATES)
        else:
            candidates = conn.execute(_CANDIDATES_OF_LOCKED if locked else _CANDIDATES_OF,
                                      {"b_sub": only})
        # most chains need no capabilities: their stored list is the text "[]"
        chosen = next((r.id for r in candidates
                       if r.required_capabilities == "[]"
                       or set(_load(r.required_capabilities) or []) <= offered), None)
        if chosen is None:
            return None
        row = conn.execute(_CHAIN_AND_LAST_RUN, {"b_id": chosen}).one()
        run_number = (row.last_run or 0) + 1
        conn.execute(_SET_CHAIN, {"b_id": chosen, "status": CS.RUNNING, "next_run_at": None,
                                  "waiting": None})
        conn.execute(_ADD_RUN, {"chain_id": chosen, "run_number": run_number,
                                "agent_id": agent_id, "start_time": utcnow()})
        self._event(conn, row.submission_id, "chain.started", chosen, run=run_number,
                    agent=agent_id)
        record = self._chain(row)
        record.status, record.next_run_at = CS.RUNNING, None
        return record, run_number

    def finish_run(self, chain_id: str, run_number: int, run_status: str,
                   chain_status: ProcessChainStatus, *, results: dict | None = None,
                   error_message: str | None = None, attempts: Iterable[AttemptRecord] = (),
                   auto_resume_after: datetime | None = None,
                   claim_next: tuple | None = None
                   ) -> tuple[ChainRecord, int] | None:
        """Close a run, store its attempts and move the chain to its next status, at once.
        With `claim_next' (agent id, capabilities, submission or None) the same transaction
        also claims that agent's next chain, which is returned."""
        with self.write() as conn:
            submission_id = conn.execute(_SUBMISSION_OF_CHAIN, {"b_id": chain_id}).scalar_one()
            conn.execute(_END_RUN, {"b_chain": chain_id, "b_run": run_number, "end_time": utcnow(),
                                    "status": run_status, "error_message": error_message,
                                    "auto_resume_after": auto_resume_after})
            rows = [{**a.to_row(), "chain_id": chain_id, "run_number": run_number}
                    for a in attempts]
            if rows:
                conn.execute(_ADD_ATTEMPT, rows)
            conn.execute(_SET_CHAIN, {
                "b_id": chain_id, "status": chain_status, "results": _dump(results),
                "next_run_at": auto_resume_after if chain_status == CS.PAUSED else None})
            self._event(conn, submission_id, "chain.finished", chain_id, run=run_number,
                        status=str(chain_status), errorMessage=error_message,
                        resumeAt=iso_time(auto_resume_after))
            if claim_next is not None:
                return self._claim(conn, claim_next[0], set(claim_next[1]), *claim_next[2:])
        return None

    def flag_waiting_chains(self, offers: list[Iterable[str]]) -> list[tuple[str, str, int]]:
        """Mark REGISTERED chains that no agent can run (none of `offers', the capability sets
        of the live agents, holds all they require) with the reason, and clear the mark where
        one can now. Chains newly marked get one event per submission and reason. Returns
        (submission id, reason, chains) of those events."""
        offered = [set(o) for o in offers]
        registered = _pc.status == CS.REGISTERED
        with self.read() as conn:  # usually every requirement is met: no write lock
            kinds = list(conn.execute(select(_pc.required_capabilities).where(
                registered, _pc.required_capabilities != "[]").distinct()).scalars())
            marked = list(conn.execute(select(_pc.required_capabilities).where(
                registered, _pc.waiting.is_not(None)).distinct()).scalars())
        reasons = {k: waiting_reason(_load(k) or [], offered) for k in set(kinds) | set(marked)}
        if not any(reasons.values()) and not marked:
            return []
        announced = []
        with self.write() as conn:
            now = utcnow()
            for kind, reason in reasons.items():
                same = [registered, _pc.required_capabilities == kind]
                if reason is None:
                    conn.execute(update(process_chains).where(*same, _pc.waiting.is_not(None))
                                 .values(waiting=None))
                    continue
                new = [*same, (_pc.waiting.is_(None)) | (_pc.waiting != reason)]
                for sid, count in conn.execute(select(_pc.submission_id, func.count())
                                               .where(*new).group_by(_pc.submission_id)).all():
                    announced.append((sid, reason, count))
                    conn.execute(_ADD_EVENT, _event_row(sid, "chain.waiting", None, now,
                                                        reason=reason, chains=count))
                conn.execute(update(process_chains).where(*new).values(waiting=reason))
        return announced

    def resume_due_chains(self, now: datetime | None = None) -> list[str]:
        """PAUSED chains whose wake-up time has passed (strictly) become REGISTERED."""
        now = now or utcnow()
        due = (select(process_chains.c.id, process_chains.c.submission_id).where(
            process_chains.c.status == CS.PAUSED, process_chains.c.next_run_at.is_not(None),
            process_chains.c.next_run_at < now))
        with self.read() as conn:  # usually nothing is due: don't take the write lock
            if not conn.execute(due.limit(1)).first():
                return []
        with self.write() as conn:
            rows = conn.execute(due).all()
            for chain_id, submission_id in rows:
                conn.execute(update(process_chains).where(process_chains.c.id == chain_id)
                             .values(status=CS.REGISTERED, next_run_at=None))
                self._event(conn, submission_id, "chain.resumed", chain_id)
        return [r[0] for r in rows]

    def next_wake_up(self) -> datetime | None:
        with self.read() as conn:
            return _utc(conn.execute(select(func.min(process_chains.c.next_run_at))
                                     .where(process_chains.c.status == CS.PAUSED)).scalar())

    def cancel_chains(self, submission_id: str) -> list[str]:
        """REGISTERED and PAUSED chains of a submission become CANCELLED; returns the ids of
        its RUNNING chains, which their agents must stop."""
        with self.write() as conn:
            conn.execute(update(submissions).where(submissions.c.id == submission_id)
                         .values(cancel_requested=True))
            waiting = list(conn.execute(select(process_chains.c.id).where(
                process_chains.c.submission_id == submission_id,
                process_chains.c.status.in_(sorted(WAITING_CHAIN)))).scalars())
            if waiting:
                conn.execute(update(process_chains).where(process_chains.c.id.in_(waiting))
                             .values(status=CS.CANCELLED, next_run_at=None))
            self._event(conn, submission_id, "submission.cancelRequested", cancelled=len(waiting))
            return list(conn.execute(select(process_chains.c.id).where(
                process_chains.c.submission_id == submission_id,
                process_chains.c.status == CS.RUNNING)).scalars())

    def cancel_requested(self, submission_id: str) -> bool:
        with self.read() as conn:
            return bool(conn.execute(select(submissions.c.cancel_requested)
                                     .where(submissions.c.id == submission_id)).scalar())

    def lost_runs(self, live_agents: Iterable[str]) -> list[dict]:
        """Open runs of RUNNING chains whose agent is not among `live_agents`, with the host
        that agent last reported (None: unknown)."""
        live = set(live_agents)
        with self.read() as conn:
            rows = conn.execute(
                select(runs.c.chain_id, runs.c.run_number, runs.c.agent_id, agents.c.host)
                .join(process_chains, process_chains.c.id == runs.c.chain_id)
                .outerjoin(agents, agents.c.id == runs.c.agent_id)
                .where(process_chains.c.status == CS.RUNNING, runs.c.end_time.is_(None))).all()
        return [{"chainId": r.chain_id, "runNumber": r.run_number, "agentId": r.agent_id,
                 "host": r.host} for r in rows if r.agent_id not in live]

    def release_orphans(self, live_agents: Iterable[str]) -> list[str]:
        """RUNNING chains whose agent is gone go back to REGISTERED; their open run is closed
        as AGENT_LOST. Returns the chain ids."""
        live = set(live_agents)
        with self.write() as conn:
            open_runs = conn.execute(
                select(runs.c.chain_id, runs.c.run_number, runs.c.agent_id,
                       process_chains.c.submission_id)
                .join(process_chains, process_chains.c.id == runs.c.chain_id)
                .where(process_chains.c.status == CS.RUNNING, runs.c.end_time.is_(None))).all()
            lost = [r for r in open_runs if r.agent_id not in live]
            for r in lost:
                conn.execute(update(runs).where(and_(runs.c.chain_id == r.chain_id,
                                                     runs.c.run_number == r.run_number))
                             .values(end_time=utcnow(), status="AGENT_LOST",
                                     error_message=f"Agent `{r.agent_id}' was lost"))
                conn.execute(update(process_chains).where(process_chains.c.id == r.chain_id)
                             .values(status=CS.REGISTERED))
                self._event(conn, r.submission_id, "chain.agentLost", r.chain_id,
                            run=r.run_number, agent=r.agent_id)
        return [r.chain_id for r in lost]

    # ------------------------------------------------------------------ runs and attempts

    def runs(self, chain_id: str) -> list[RunRecord]:
        return self._runs(runs.c.chain_id == chain_id)

    def submission_runs(self, submission_id: str) -> list[RunRecord]:
        """The runs of all chains of a submission (one query, for whole documents)."""
        return self._runs(runs.c.chain_id.in_(
            select(_pc.id).where(_pc.submission_id == submission_id)))

    def _runs(self, where: Any) -> list[RunRecord]:
        with self.read() as conn:
            rows = conn.execute(select(runs).where(where)
                                .order_by(runs.c.chain_id, runs.c.run_number)).all()
        return [RunRecord(r.chain_id, r.run_number, r.agent_id, _utc(r.start_time),
                          _utc(r.end_time), r.status, r.error_message, _utc(r.auto_resume_after))
                for r in rows]

    def attempts(self, chain_id: str, run_number: int | None = None) -> list[dict]:
        where = [attempts.c.chain_id == chain_id]
        if run_number is not None:
            where.append(attempts.c.run_number == run_number)
        return [a for _, a in self._attempts(*where)]

    def submission_attempts(self, submission_id: str) -> list[tuple[str, dict]]:
        """(chain id, attempt) of all chains of a submission, in the order they happened."""
        return self._attempts(attempts.c.chain_id.in_(
            select(_pc.id).where(_pc.submission_id == submission_id)))

    def _attempts(self, *where: Any) -> list[tuple[str, dict]]:
        with self.read() as conn:
            rows = conn.execute(select(attempts).where(*where).order_by(attempts.c.id)).all()
        return [(r.chain_id, {"runNumber": r.run_number, **AttemptRecord.from_row(r).to_json()})
                for r in rows]

    # ------------------------------------------------------------------ liveness

    def heartbeat(self, owner: str, agent_rows: list[dict], lease_s: float) -> None:
        """This engine is alive: refresh its agents and extend its submissions' leases."""
        now = utcnow()
        with self.write() as conn:
            for a in agent_rows:
                values = {"capabilities": _dump(sorted(a.get("capabilities", []))), "last_seen": now,
                          "chain_id": a.get("chain_id"), "owner": owner,
                          "host": a.get("host"), "pid": a.get("pid")}
                changed = conn.execute(update(agents).where(agents.c.id == a["id"]).values(**values))
                if changed.rowcount == 0:
                    conn.execute(insert(agents).values(id=a["id"], start_time=now,
                                                       state_changed_time=now, **values))
            conn.execute(update(submissions).where(submissions.c.owner == owner,
                                                   submissions.c.status == SS.RUNNING)
                         .values(lease_until=now + timedelta(seconds=lease_s)))

    def live_agents(self, max_age_s: float) -> list[dict]:
        since = utcnow() - timedelta(seconds=max_age_s)
        with self.read() as conn:
            rows = conn.execute(select(agents).where(agents.c.last_seen >= since)
                                .order_by(agents.c.id)).all()
        return [{"id": r.id, "capabilities": _load(r.capabilities) or [], "processChainId": r.chain_id,
                 "startTime": iso_time(_utc(r.start_time)), "lastSeen": iso_time(_utc(r.last_seen)),
                 "owner": r.owner, "host": r.host, "pid": r.pid} for r in rows]

    def forget_agents(self, owner: str) -> None:
        """A clean shutdown: this engine's agents are gone and its leases end now."""
        with self.write() as conn:
            conn.execute(agents.delete().where(agents.c.owner == owner))
            conn.execute(update(submissions).where(submissions.c.owner == owner,
                                                   submissions.c.status == SS.RUNNING)
                         .values(lease_until=utcnow()))

    def adopt_submissions(self, owner: str, lease_s: float,
                          only: str | None = None) -> list[Submission]:
        """RUNNING submissions (with `only', that one) without a live controller (its lease
        ran out, or a retry made them RUNNING again) are taken over."""
        now = utcnow()
        orphaned = select(submissions.c.id).where(
            submissions.c.status == SS.RUNNING,
            (submissions.c.lease_until.is_(None)) | (submissions.c.lease_until < now))
        if only is not None:
            orphaned = orphaned.where(submissions.c.id == only)
        with self.read() as conn:  # usually there is none: don't take the write lock
            if conn.execute(orphaned.limit(1)).first() is None:
                return []
        with self.write() as conn:
            rows = conn.execute(orphaned).all()
            ids = [r.id for r in rows]
            if ids:
                conn.execute(update(submissions).where(submissions.c.id.in_(ids)).values(
                    owner=owner, lease_until=now + timedelta(seconds=lease_s)))
            for sid in ids:
                self._event(conn, sid, "submission.resumed", owner=owner)
            found = conn.execute(select(submissions).where(submissions.c.id.in_(ids))
                                 .order_by(submissions.c.seq)).all() if ids else []
        return [self._submission(r) for r in found]

    # ------------------------------------------------------------------ user requests

    def cancel_submission(self, submission_id: str) -> tuple[str | None, list[str]]:
        """Cancel: an ACCEPTED submission ends CANCELLED at once; a RUNNING one has its waiting
        chains cancelled. Returns (status before, RUNNING chain ids to stop)."""
        with self.write() as conn:
            status = conn.execute(select(submissions.c.status)
                                  .where(submissions.c.id == submission_id)).scalar()
            if status == SS.ACCEPTED:
                conn.execute(update(submissions).where(submissions.c.id == submission_id).values(
                    status=SS.CANCELLED, cancel_requested=True, end_time=utcnow()))
                self._event(conn, submission_id, "submission.status", status=str(SS.CANCELLED))
                return status, []
        if status != SS.RUNNING:
            return status, []
        return status, self.cancel_chains(submission_id)

    def retry_submission(self, submission_id: str) -> str | None:
        """Extension 5: ERROR, PARTIAL_SUCCESS or CANCELLED back to RUNNING; failed and
        cancelled chains are REGISTERED again. Returns the status before (None: unknown)."""
        with self.write() as conn:
            status = conn.execute(select(submissions.c.status)
                                  .where(submissions.c.id == submission_id)).scalar()
            if status not in RETRYABLE_SUBMISSION:
                return status
            conn.execute(update(process_chains).where(
                process_chains.c.submission_id == submission_id,
                process_chains.c.status.in_([CS.ERROR, CS.CANCELLED])).values(
                status=CS.REGISTERED, fed_round=None, next_run_at=None))
            conn.execute(update(submissions).where(submissions.c.id == submission_id).values(
                status=SS.RUNNING, end_time=None, error_message=None, results=None,
                cancel_requested=False, owner=None, lease_until=None))
            self._event(conn, submission_id, "submission.retried", previous=str(status))
            self._event(conn, submission_id, "submission.status", status=str(SS.RUNNING))
            return status

    def cancel_chain(self, chain_id: str) -> str | None:
        """Cancel one chain: REGISTERED or PAUSED ends CANCELLED at once; a RUNNING one is
        flagged for its agent. Returns the status before (None: unknown chain)."""
        with self.write() as conn:
            row = conn.execute(select(process_chains.c.status, process_chains.c.submission_id)
                               .where(process_chains.c.id == chain_id)).first()
            if row is None:
                return None
            if row.status in WAITING_CHAIN:
                conn.execute(update(process_chains).where(process_chains.c.id == chain_id)
                             .values(status=CS.CANCELLED, next_run_at=None, cancel_requested=True))
            elif row.status == CS.RUNNING:
                conn.execute(update(process_chains).where(process_chains.c.id == chain_id)
                             .values(cancel_requested=True))
            self._event(conn, row.submission_id, "chain.cancelRequested", chain_id)
            return row.status

    def chains_to_stop(self, chain_ids: Iterable[str]) -> list[str]:
        """Of these RUNNING chains, those whose cancellation was requested (chain or submission)."""
        ids = list(chain_ids)
        if not ids:
            return []
        with self.read() as conn:
            rows = conn.execute(
                select(process_chains.c.id)
                .join(submissions, submissions.c.id == process_chains.c.submission_id)
                .where(process_chains.c.id.in_(ids),
                       process_chains.c.cancel_requested | submissions.c.cancel_requested)).all()
        return [r.id for r in rows]

    def unfed_finished_chains(self, submission_id: str,
                              after_round: int | None = None) -> list[ChainRecord]:
        """Finished chains whose outcome the generator has not seen yet, oldest first. With
        `after_round' (resuming from a state of that round) also those fed in later rounds."""
        not_fed = process_chains.c.fed_round.is_(None)
        if after_round is not None:
            not_fed = not_fed | (process_chains.c.fed_round > after_round)
        with self.read() as conn:
            rows = conn.execute(select(process_chains).where(
                process_chains.c.submission_id == submission_id, not_fed,
                process_chains.c.status.in_(sorted(FINISHED_CHAIN)))).all()
        # sorted here: ORDER BY would lead SQLite to walk all the submission's chains
        return [self._chain(r) for r in sorted(rows, key=lambda r: r.seq)]

    def successful_results(self, submission_id: str) -> list[dict]:
        with self.read() as conn:
            rows = conn.execute(select(process_chains.c.results).where(
                process_chains.c.submission_id == submission_id,
                process_chains.c.status == CS.SUCCESS).order_by(process_chains.c.seq)).all()
        return [_load(r.results) or {} for r in rows]

    def requeue_run(self, chain_id: str, run_number: int, reason: str) -> None:
        """An engine shutting down gives a chain back: the run ends INTERRUPTED, the chain is
        REGISTERED again for whoever runs next."""
        with self.write() as conn:
            row = conn.execute(
                select(process_chains.c.submission_id, process_chains.c.cancel_requested,
                       submissions.c.cancel_requested.label("submission_cancel"))
                .join(submissions, submissions.c.id == process_chains.c.submission_id)
                .where(process_chains.c.id == chain_id)).one()
            submission_id = row.submission_id
            # a chain whose cancellation was asked for stays cancelled
            cancelled = row.cancel_requested or row.submission_cancel
            conn.execute(update(runs).where(runs.c.chain_id == chain_id,
                                            runs.c.run_number == run_number)
                         .values(end_time=utcnow(), status="CANCELLED" if cancelled else "INTERRUPTED",
                                 error_message=None if cancelled else reason))
            conn.execute(update(process_chains).where(process_chains.c.id == chain_id)
                         .values(status=CS.CANCELLED if cancelled else CS.REGISTERED))
            self._event(conn, submission_id, "chain.requeued", chain_id, run=run_number,
                        reason=reason)
