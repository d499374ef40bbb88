"""Leases (the engine's liveness work): heartbeats of agents and of the submissions an engine
drives, taking submissions to drive, adopting those whose engine died, and giving back the
chains of lost agents."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Iterable

from sqlalchemy import Connection, and_, bindparam, exists, select, update

from steepy import events as ev
from steepy.model.attempt import AGENT_LOST
from steepy.model.clock import SYSTEM, Clock
from steepy.model.common import as_utc, iso_time
from steepy.registry.attempts import close_cut_attempts
from steepy.model.submission import Submission
from steepy.registry.connector import Connector
from steepy.registry.reads import LeaseReads
from steepy.registry.records import (
    CS,
    PENDING_EVENTS,
    SS,
    add_event,
    load,
    submission_record,
)
from steepy.registry.heartbeats import beat_at_once, write_heartbeat
from steepy.registry.tables import agents, process_chains, runs, submissions
from steepy.registry.together import read_together
from steepy.registry.waiting import MARKS, flag_waiting, marks_hold, waiting_reasons

_pc = process_chains.c
_sc = submissions.c


# the owner ids of `steepy run`'s engines begin so: what a killed `steepy run` left is told
# from what workers and servers left (`adopt_submissions(abandoned=True)`)
RUN_OWNER = "run-"


# the reads of every heartbeat, built once too
_SINCE = bindparam("b_since", type_=agents.c.last_seen.type)
_LIVE = select(agents).where(agents.c.last_seen >= _SINCE).order_by(agents.c.id)
_SILENT = select(agents.c.id).where(agents.c.last_seen < _SINCE).limit(1)
_OPEN_RUNS = (select(runs.c.chain_id, runs.c.run_number, runs.c.agent_id, agents.c.host,
                     agents.c.pid, agents.c.last_seen)
              .join(process_chains, _pc.id == runs.c.chain_id)
              .outerjoin(agents, agents.c.id == runs.c.agent_id)
              .where(_pc.status == CS.RUNNING, runs.c.end_time.is_(None)))
ACCEPTED = select(_sc.id).where(_sc.status == SS.ACCEPTED).limit(1)  # (any to take?)


def _lease_over(now: Any, since: Any) -> Any:
    """RUNNING without a live controller: without a lease (a retry made it RUNNING again),
    or its lease ran out and its engine's agents have been silent since `since` (an engine
    alive, whose heartbeat skipped that lease while another transaction held its row, keeps
    it: `heartbeats._BEAT_FREE_LEASES`)."""
    engine_alive = exists().where(agents.c.owner == _sc.owner, agents.c.last_seen >= since)
    return (_sc.status == SS.RUNNING) & (
        _sc.lease_until.is_(None) | ((_sc.lease_until < now) & ~engine_alive))


_ORPHANED = select(_sc.id).where(_lease_over(
    bindparam("b_now", type_=_sc.lease_until.type),
    bindparam("b_since", type_=agents.c.last_seen.type))).limit(1)
# whether any submission may be without a controller (those `adopt_submissions` takes are
# among these, whoever looks and however long their leases)
MAY_BE_ORPHANED = select(_sc.id).where(_sc.status == SS.RUNNING, _sc.lease_until.is_(None) | (
    _sc.lease_until < bindparam("b_now", type_=_sc.lease_until.type))).limit(1)


class SqlLeases(LeaseReads):  # (`unowned': reads.py)
    db: Connector

    def __init__(self, db: Connector, clock: Clock = SYSTEM):
        super().__init__(db, clock)

    def heartbeat(self, owner: str, agent_rows: list[dict], lease_s: float) -> None:
        """This engine is alive: refresh its agents and extend its submissions' leases. On
        PostgreSQL in a transaction of its own, not behind this process's other writes, in
        one round trip (heartbeats.py; agents whose rows are missing in a second one)."""
        # (what others must see writes events)
        if self.db.dialect.postgres:  # one round trip, unless agents' rows are missing
            with self.db.write(notify=False, alone=True) as conn:
                agent_rows = beat_at_once(conn, self.db.dialect, owner, agent_rows, lease_s,
                                          self.clock.now())
            if not agent_rows:
                return
        with self.db.write(notify=False, alone=True) as conn:
            write_heartbeat(conn, self.db.dialect, owner, agent_rows, lease_s, self.clock.now())

    def beat(self, owner: str, agent_rows: list[dict] | None, lease_s: float,
             flag: bool) -> tuple[list[dict], list[dict], list[tuple[str, str, int]]]:
        """An engine's round of looking for what dead engines left, in one transaction: the
        heartbeat (if `agent_rows`), the live agents (`live_agents(lease_s)`), the lost runs
        among them (`lost_runs`), agents silent for three leases forgotten
        (`forget_lost_agents`) and, with `flag`, `flag_waiting_chains` for the live agents'
        capabilities (what it announced is the third of what is returned). Without a
        heartbeat, a round with nothing to write only reads (`_quiet`)."""
        now = self.clock.now()
        if agent_rows is None:  # (PostgreSQL's engines beat apart: liveness.py)
            quiet = self._quiet(now, lease_s, flag)
            if quiet is not None:
                return quiet
        failure: Exception | None = None
        with self.db.write(notify=False) as conn:  # (what others must see writes events)
            if agent_rows is not None:
                write_heartbeat(conn, self.db.dialect, owner, agent_rows, lease_s, now)
            pending = conn.info[PENDING_EVENTS]
            told = len(pending)
            try:  # the heartbeat commits whatever becomes of the rest: its leases must hold
                with conn.begin_nested():
                    live = self._live(conn, now - timedelta(seconds=lease_s))
                    lost = self._lost(conn, [a["id"] for a in live])
                    if conn.execute(_SILENT, {
                            "b_since": now - timedelta(seconds=3 * lease_s)}).first():
                        self._forget(conn, now - timedelta(seconds=3 * lease_s))
                    announced = (self._flag(conn, [set(a["capabilities"]) for a in live])
                                 if flag else [])
            except Exception as e:
                if conn.invalidated:  # the connection is lost: nothing left to commit
                    raise
                failure = e
                del pending[told:]  # (the events of what was rolled back)
        if failure is not None:
            raise failure
        return live, lost, announced

    def _quiet(self, now: datetime, lease_s: float, flag: bool
               ) -> tuple[list[dict], list[dict], list[tuple[str, str, int]]] | None:
        """What `beat` without a heartbeat returns when it would write nothing (no run lost,
        no agent to forget, no chain to mark or unmark: an idle worker's every round), read
        without the write lock, in one round trip on PostgreSQL; else None."""
        reads: list[tuple[Any, dict]] = [
            (_LIVE, {"b_since": now - timedelta(seconds=lease_s)}), (_OPEN_RUNS, {}),
            (_SILENT, {"b_since": now - timedelta(seconds=3 * lease_s)})]
        live_rows, open_runs, silent, *marks = read_together(
            self.db, reads + ([(MARKS, {})] if flag else []))
        live = self._agents(live_rows)
        ids = {a["id"] for a in live}
        if silent or any(r.agent_id not in ids for r in open_runs):
            return None
        if flag and not marks_hold([(k, m) for k, m in marks[0]],
                                   [set(a["capabilities"]) for a in live]):
            return None
        return live, [], []

    def live_agents(self, max_age_s: float) -> list[dict]:
        with self.db.read() as conn:
            return self._live(conn, self.clock.now() - timedelta(seconds=max_age_s))

    @classmethod
    def _live(cls, conn: Connection, since: datetime) -> list[dict]:
        return cls._agents(conn.execute(_LIVE, {"b_since": since}).all())

    @staticmethod
    def _agents(rows: Iterable[Any]) -> list[dict]:
        return [{"id": r.id, "capabilities": load(r.capabilities) or [], "processChainId": r.chain_id,
                 "startTime": iso_time(as_utc(r.start_time)), "lastSeen": iso_time(as_utc(r.last_seen)),
                 "owner": r.owner, "host": r.host, "pid": r.pid} for r in rows]

    def forget_agents(self, owner: str) -> None:
        """A clean shutdown: this engine's agents are gone and its leases end now."""
        with self.db.write() as conn:
            gone = conn.execute(agents.delete().where(agents.c.owner == owner)
                                .returning(agents.c.id)).scalars().all()
            for agent_id in sorted(gone):
                add_event(conn, None, ev.AgentLeft(agent=agent_id, reason="stopped"))
            conn.execute(update(submissions).where(_sc.owner == owner, _sc.status == SS.RUNNING)
                         .values(lease_until=self.clock.now()))

    def forget_lost_agents(self, max_age_s: float) -> list[str]:
        """Agents silent for longer than `max_age_s` (their engine died) are gone."""
        before = self.clock.now() - timedelta(seconds=max_age_s)
        with self.db.read() as conn:  # usually none: don't take the write lock
            if conn.execute(_SILENT, {"b_since": before}).first() is None:
                return []
        with self.db.write() as conn:
            return self._forget(conn, before)

    @staticmethod
    def _forget(conn: Connection, before: datetime) -> list[str]:
        gone = conn.execute(agents.delete().where(agents.c.last_seen < before)
                            .returning(agents.c.id)).scalars().all()
        for agent_id in sorted(gone):
            add_event(conn, None, ev.AgentLeft(agent=agent_id, reason="lost"))
        return sorted(gone)

    def fetch_next_submission(self, owner: str = "", lease_s: float = 30,
                              only: str | None = None) -> Submission | None:
        """Atomically take the ACCEPTED submission to run next (with `only', that one or
        none): highest workflow priority, then oldest. It becomes RUNNING, leased to `owner'."""
        accepted = [_sc.status == SS.ACCEPTED]
        if only is not None:
            accepted.append(_sc.id == only)
        with self.db.read() as conn:  # most calls find nothing: don't take the write lock
            if conn.execute(ACCEPTED if only is None else select(_sc.id).where(*accepted)
                            .limit(1)).first() is None:
                return None
        with self.db.write() as conn:
            row = conn.execute(self.db.dialect.locked(
                select(submissions).where(*accepted).order_by(_sc.priority.desc(), _sc.seq)
                .limit(1))).first()
            if row is None:
                return None
            now = self.clock.now()
            conn.execute(update(submissions).where(_sc.id == row.id).values(
                status=SS.RUNNING, start_time=now, owner=owner,
                lease_until=now + timedelta(seconds=lease_s)))
            add_event(conn, row.id, ev.SubmissionStatusChanged(status=str(SS.RUNNING)))
            row = conn.execute(select(submissions).where(_sc.id == row.id)).first()
        return submission_record(row)

    def adopt_submissions(self, owner: str, lease_s: float, only: str | None = None,
                          abandoned: bool = False) -> list[Submission]:
        """RUNNING submissions (with `only', that one) without a live controller (its lease
        ran out, or a retry made them RUNNING again) are taken over; with `abandoned', only
        those an engine of `steepy run' held (its owner id starts with RUN_OWNER) until it
        died or stopped: not those a retry made RUNNING, not those of workers and servers.

        Many engines may look at once: each locks the submissions it takes, skipping those
        another transaction holds (on PostgreSQL; it may be a transaction of an engine cut
        off from the server, which nobody should wait for), and the update takes one only if
        its lease is still over when the row is written, so exactly one of them drives it."""
        now = self.clock.now()
        if only is None and not abandoned:  # (a worker's look, every heartbeat)
            with self.db.read() as conn:  # usually there is none: don't take the write lock
                if conn.execute(_ORPHANED, {
                        "b_now": now, "b_since": now - timedelta(seconds=lease_s)}).first() is None:
                    return []
        lease_over = _lease_over(now, now - timedelta(seconds=lease_s))
        orphaned = select(_sc.id).where(lease_over)
        if only is not None:
            orphaned = orphaned.where(_sc.id == only)
        if abandoned:
            orphaned = orphaned.where(_sc.owner.like(f"{RUN_OWNER}%"),
                                      _sc.lease_until.is_not(None))
        with self.db.read() as conn:  # usually there is none: don't take the write lock
            if conn.execute(orphaned.limit(1)).first() is None:
                return []
        with self.db.write() as conn:  # (one another transaction holds: the next look)
            ids = [r.id for r in conn.execute(self.db.dialect.locked(orphaned)).all()]
            if not ids:
                return []
            ids = sorted(conn.execute(
                update(submissions).where(_sc.id.in_(ids), lease_over)
                .values(owner=owner, lease_until=now + timedelta(seconds=lease_s))
                .returning(_sc.id)).scalars().all())
            for sid in ids:
                add_event(conn, sid, ev.SubmissionResumed(owner=owner))
            found = conn.execute(select(submissions).where(_sc.id.in_(ids))
                                 .order_by(_sc.seq)).all() if ids else []
        return [submission_record(r) for r in found]

    def lost_runs(self, live_agents: Iterable[str]) -> list[dict]:
        """Open runs of RUNNING chains whose agent is not among `live_agents`, with the host
        and the engine's pid that agent last reported (None: unknown) and, under `attempts`, where the processes
        of each of their attempts ran: `host`, `executorPid` and `executorStarted` (the
        executor that spawned them, its start time in seconds since the epoch), `pgid` (the
        tool's process group), `startTime` (seconds since the epoch) and `outcome` (RUNNING:
        not ended); attempts recorded before these were kept have None there."""
        with self.db.read() as conn:
            return self._lost(conn, live_agents)

    @staticmethod
    def _lost(conn: Connection, live_agents: Iterable[str]) -> list[dict]:
        from steepy.registry.tables import attempts

        live = set(live_agents)
        rows = conn.execute(_OPEN_RUNS).all()
        lost = [r for r in rows if r.agent_id not in live]
        found: dict[tuple[str, int], list[dict]] = {}
        for chain_ids in (lost[i:i + 500] for i in range(0, len(lost), 500)):
            _a = attempts.c
            for a in conn.execute(
                    select(_a.chain_id, _a.run_number, _a.host, _a.executor_pid,
                           _a.executor_started, _a.pgid, _a.start_time, _a.outcome)
                    .where(_a.chain_id.in_(sorted({r.chain_id for r in chain_ids})))
                    .order_by(_a.id)).all():
                start = as_utc(a.start_time)
                found.setdefault((a.chain_id, a.run_number), []).append({
                    "host": a.host, "executorPid": a.executor_pid,
                    "executorStarted": a.executor_started, "pgid": a.pgid,
                    "startTime": None if start is None else start.timestamp(),
                    "outcome": a.outcome})
        return [{"chainId": r.chain_id, "runNumber": r.run_number, "agentId": r.agent_id,
                 "host": r.host, "enginePid": r.pid,
                 "lastSeen": None if r.last_seen is None else as_utc(r.last_seen).timestamp(),
                 "attempts": found.get((r.chain_id, r.run_number), [])} for r in lost]

    def release_orphans(self, live_agents: Iterable[str],
                        max_age_s: float | None = None) -> list[str]:
        """RUNNING chains whose agent is gone go back to REGISTERED; their open run is closed
        as AGENT_LOST. Returns the chain ids. With `max_age_s`, an agent seen within it is
        alive too, as this transaction sees it: one that started (and claimed a chain) after
        the caller looked at `live_agents` keeps its chain, which would otherwise run twice."""
        live = set(live_agents)
        with self.db.write() as conn:  # (runs another transaction holds: the next round)
            open_runs = conn.execute(self.db.dialect.locked(
                select(runs.c.chain_id, runs.c.run_number, runs.c.agent_id, _pc.submission_id)
                .join(process_chains, _pc.id == runs.c.chain_id)
                .where(_pc.status == CS.RUNNING, runs.c.end_time.is_(None)))).all()
            if max_age_s is not None and any(r.agent_id not in live for r in open_runs):
                # after the runs: an agent whose run is seen was stored before it (READ
                # COMMITTED on PostgreSQL reads each statement's own moment)
                live.update(a["id"] for a in self._live(
                    conn, self.clock.now() - timedelta(seconds=max_age_s)))
            lost = []
            for r in open_runs:
                if r.agent_id in live:
                    continue
                # only if still open: its engine may have ended it since it was read (its
                # end then stands, and the chain must not run again)
                if conn.execute(update(runs).where(and_(
                        runs.c.chain_id == r.chain_id, runs.c.run_number == r.run_number,
                        runs.c.end_time.is_(None))).values(
                        end_time=self.clock.now(), status=AGENT_LOST,
                        error_message=f"Agent `{r.agent_id}' was lost")).rowcount != 1:
                    continue
                lost.append(r)
                close_cut_attempts(conn, r.chain_id, r.run_number, AGENT_LOST,
                                   f"cut: agent `{r.agent_id}' was lost with its engine")
                conn.execute(update(process_chains).where(_pc.id == r.chain_id)
                             .values(status=CS.REGISTERED))
                add_event(conn, r.submission_id,
                          ev.ChainAgentLost(run=r.run_number, agent=r.agent_id), r.chain_id)
        return [r.chain_id for r in lost]

    def flag_waiting_chains(self, offers: list[Iterable[str]]) -> list[tuple[str, str, int]]:
        """Mark REGISTERED chains that no agent can run (none of `offers', the capability sets
        of the live agents, holds all they require) with the reason, and clear the mark where
        one can now. Chains newly marked get one event per submission and reason. Returns
        (submission id, reason, chains) of those events."""
        offered = [set(o) for o in offers]
        with self.db.read() as conn:  # usually every requirement is met: no write lock
            reasons = waiting_reasons(conn, offered)
        if not reasons:
            return []
        with self.db.write() as conn:
            return self._flag(conn, offered, reasons)

    def _flag(self, conn: Connection, offered: list[set[str]],
              reasons: dict[str, str | None] | None = None) -> list[tuple[str, str, int]]:
        return flag_waiting(conn, offered, self.clock.now(), reasons)
