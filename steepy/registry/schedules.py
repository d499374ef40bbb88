"""Recurring submissions (extensions 13) and the engines' timers: storing schedules, and
firing those that are due, each due time exactly once however many engines look.

An engine claims a due schedule by locking its row (PostgreSQL: FOR UPDATE SKIP LOCKED, so
other engines pass it by; SQLite: the write lock every writer takes at BEGIN), stores the
new submission, records the firing and moves next_fire_time on with a compare-and-set, all
in one transaction: a crash before the commit leaves the due time for another engine, a
crash after it leaves nothing to do twice. A unique (schedule, due time) in
schedule_firings is the last guard."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from apscheduler.triggers.base import BaseTrigger
from sqlalchemy import delete, func, insert, select, update

from steepy import events as ev
from steepy.errors import SteepyError
from steepy.model.ids import unique_id
from steepy.model.common import as_utc, iso_time, utcnow
from steepy.model.schedule import Schedule
from steepy.model.workflow import Workflow
from steepy.registry.connector import Connector
from steepy.registry.records import add_event, dump, load
from steepy.registry.requests import insert_submission
from steepy.registry.tables import schedule_firings, schedules, timers
from steepy.model.triggers import (TriggerSpec, fire_times, first_at_or_after,
                                   settled_next_fire_time)

_s = schedules.c
NEXT_DUE = select(func.min(_s.next_fire_time)).where(_s.paused.is_(False))  # (`next_due`)
_f = schedule_firings.c


class _Lost(SteepyError):
    """Another engine moved the due time on first: roll back, nothing happened here."""


def _utc(value: datetime | None) -> datetime | None:
    return None if value is None else value.astimezone(timezone.utc)


def _trigger(row: Any) -> TriggerSpec:
    return TriggerSpec(row.kind, row.expression, row.timezone, row.interval_ms,
                       as_utc(row.anchor))


def _next_fire_time(row: Any) -> datetime | None:
    """The row's next fire time, settled if it was stored under the old weekday meaning."""
    return settled_next_fire_time(_trigger(row).build(), as_utc(row.next_fire_time),
                                  as_utc(row.last_fire_time), as_utc(row.created_time))


def _schedule(row: Any) -> Schedule:
    return Schedule(row.id, row.name, _trigger(row), Workflow.from_json(load(row.workflow)),
                    row.source, load(row.required_capabilities) or [], row.priority,
                    bool(row.paused), as_utc(row.created_time), as_utc(row.last_fire_time),
                    _next_fire_time(row), row.last_submission_id, load(row.vars))


def _firing(row: Any) -> dict[str, Any]:
    out = {"outcome": row.outcome, "dueTime": iso_time(as_utc(row.due_time)),
           "time": iso_time(as_utc(row.time)), "count": row.count}
    if row.last_due_time is not None:
        out["lastDueTime"] = iso_time(as_utc(row.last_due_time))
    if row.submission_id:
        out["submissionId"] = row.submission_id
    return out


class SqlSchedules:
    def __init__(self, db: Connector):
        self.db = db
        self._settled = False

    def settle(self) -> None:
        """Once per registry, before the first look at what is due: store the settled next
        fire time of every crontab schedule stored under the old weekday meaning, so a real
        fire time before the stale one is due on time."""
        if self._settled:
            return
        with self.db.read() as conn:
            rows = conn.execute(select(schedules).where(_s.kind == "cron")).all()
        stale = [(r, _next_fire_time(r)) for r in rows]
        stale = [(r, t) for r, t in stale if t != as_utc(r.next_fire_time)]
        if stale:
            with self.db.write() as conn:
                for row, settled in stale:  # unless another engine moved it on first
                    conn.execute(update(schedules).where(
                        _s.id == row.id, _s.next_fire_time == row.next_fire_time)
                        .values(next_fire_time=settled))
        self._settled = True

    def add_schedule(self, schedule: Schedule) -> Schedule:
        """Store a schedule; its first fire time is computed here. Returns it as stored."""
        now = utcnow()
        trigger = schedule.trigger
        first = _utc(first_at_or_after(trigger.build(), now))
        with self.db.write() as conn:
            conn.execute(insert(schedules).values(
                id=schedule.id, name=schedule.name, workflow=dump(schedule.workflow.to_json()),
                source=schedule.source,
                required_capabilities=dump(list(schedule.required_capabilities)),
                priority=schedule.priority, kind=trigger.kind, expression=trigger.expression,
                timezone=trigger.timezone, interval_ms=trigger.interval_ms,
                anchor=_utc(trigger.anchor), paused=schedule.paused, created_time=now,
                next_fire_time=first, vars=dump(schedule.vars or None)))
            return _schedule(conn.execute(select(schedules).where(_s.id == schedule.id)).one())

    def list_schedules(self) -> list[Schedule]:
        with self.db.read() as conn:
            rows = conn.execute(select(schedules).order_by(_s.created_time, _s.id)).all()
        return [_schedule(r) for r in rows]

    def get_schedule(self, schedule_id: str) -> Schedule | None:
        with self.db.read() as conn:
            row = conn.execute(select(schedules).where(_s.id == schedule_id)).first()
        return None if row is None else _schedule(row)

    def set_paused(self, schedule_id: str, paused: bool) -> Schedule | None:
        """Pause, or resume from now on: the times it was paused for are not caught up."""
        with self.db.write() as conn:
            row = conn.execute(select(schedules).where(_s.id == schedule_id)).first()
            if row is None:
                return None
            values: dict[str, Any] = {"paused": paused}
            if not paused and row.paused:
                trigger = _schedule(row).trigger.build()
                values["next_fire_time"] = _utc(first_at_or_after(trigger, utcnow()))
            conn.execute(update(schedules).where(_s.id == schedule_id).values(**values))
            return _schedule(conn.execute(select(schedules).where(_s.id == schedule_id)).one())

    def remove_schedule(self, schedule_id: str) -> bool:
        """Remove a schedule and its firings' records (its submissions stay)."""
        with self.db.write() as conn:
            conn.execute(delete(schedule_firings).where(_f.schedule_id == schedule_id))
            return conn.execute(delete(schedules).where(_s.id == schedule_id)).rowcount > 0

    def firings(self, schedule_id: str, limit: int = 20) -> list[dict[str, Any]]:
        """What the latest due times became, newest first."""
        with self.db.read() as conn:
            rows = conn.execute(select(schedule_firings).where(_f.schedule_id == schedule_id)
                                .order_by(_f.due_time.desc()).limit(limit)).all()
        return [_firing(r) for r in rows]

    def next_due(self) -> datetime | None:
        """The earliest next fire time of a schedule that is not paused."""
        self.settle()
        with self.db.read() as conn:
            return as_utc(conn.execute(NEXT_DUE).scalar())

    def fire_due(self, grace_s: float, now: datetime | None = None,
                 limit: int = 100) -> list[str]:
        """Fire every schedule that is due: one submission per schedule for its due times
        within `grace_s' (coalesced), a `skipped' record for older ones. Returns the ids of
        the new submissions."""
        now = now or utcnow()
        self.settle()
        grace = timedelta(seconds=grace_s)
        fired: list[str] = []
        due = (_s.paused.is_(False), _s.next_fire_time <= now)
        for _ in range(limit):
            with self.db.read() as conn:  # no write (nor its notification) when nothing is due
                if conn.execute(select(_s.id).where(*due).limit(1)).first() is None:
                    break
            try:
                with self.db.write() as conn:
                    row = conn.execute(self.db.dialect.locked(
                        select(schedules).where(*due).order_by(_s.next_fire_time)
                        .limit(1))).first()
                    if row is None:
                        break
                    submission_id = self._fire(conn, row, now, grace)
            except _Lost:
                continue
            if submission_id:
                fired.append(submission_id)
        return fired

    def _fire(self, conn: Any, row: Any, now: datetime, grace: timedelta) -> str | None:
        schedule = _schedule(row)
        due = schedule.next_fire_time
        assert due is not None  # the row was due
        missed = fire_times(schedule.trigger.build(), due, now, grace)
        if missed.skipped:
            conn.execute(insert(schedule_firings).values(
                schedule_id=schedule.id, due_time=_utc(missed.first_skipped),
                last_due_time=_utc(missed.last_skipped), time=now, outcome="skipped",
                count=missed.skipped))
            add_event(conn, None, ev.ScheduleSkipped(
                schedule=schedule.id, count=missed.skipped,
                first_due_time=_utc(missed.first_skipped),
                last_due_time=_utc(missed.last_skipped)))
        submission_id = None
        values: dict[str, Any] = {"next_fire_time": _utc(missed.next_time)}
        if missed.fire_at is not None:
            submission_id = unique_id()
            fire_at = _utc(missed.fire_at)
            insert_submission(conn, schedule.submission(submission_id))
            conn.execute(insert(schedule_firings).values(
                schedule_id=schedule.id, due_time=fire_at, time=now, outcome="fired",
                count=missed.coalesced, submission_id=submission_id))
            add_event(conn, submission_id, ev.ScheduleFired(
                schedule=schedule.id, name=schedule.name, due_time=fire_at,
                coalesced=missed.coalesced))
            values.update(last_fire_time=fire_at, last_submission_id=submission_id)
        moved = conn.execute(update(schedules).where(_s.id == schedule.id,
                                                     _s.next_fire_time == row.next_fire_time)
                             .values(**values)).rowcount
        if moved != 1:
            raise _Lost()
        return submission_id

    def claim_timer(self, name: str, trigger: BaseTrigger, owner: str,
                    now: datetime | None = None) -> datetime | None:
        """The due time of timer `name' if it is due and this caller is the one to act on
        it (None otherwise); its next fire time is set from `trigger' either way, so missed
        times are coalesced into one."""
        now = now or utcnow()
        stored = self.timer_due(name)
        if stored is not None and stored > now:
            return None  # not due: no write transaction
        try:
            with self.db.write() as conn:
                row = conn.execute(self.db.dialect.locked(
                    select(timers).where(timers.c.name == name))).first()
                if row is None:
                    return None  # locked by another engine, which acts on it
                due = as_utc(row.next_fire_time)
                following = _utc(first_at_or_after(trigger, now + timedelta(microseconds=1)))
                if due is not None and due > now:
                    return None
                values: dict[str, Any] = {"next_fire_time": following}
                if due is not None:
                    values.update(last_fire_time=due, last_owner=owner)
                where = (timers.c.next_fire_time.is_(None) if row.next_fire_time is None
                         else timers.c.next_fire_time == row.next_fire_time)
                if conn.execute(update(timers).where(timers.c.name == name, where)
                                .values(**values)).rowcount != 1:
                    raise _Lost()
                return due
        except _Lost:
            return None

    def timer_due(self, name: str) -> datetime | None:
        with self.db.read() as conn:
            return as_utc(conn.execute(select(timers.c.next_fire_time)
                                       .where(timers.c.name == name)).scalar())
