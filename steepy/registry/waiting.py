"""Chains that wait for an agent nobody runs: REGISTERED chains whose required capabilities
no live agent offers (all of them, on one agent) are marked with the reason, once, with one
event per submission and reason; the mark goes when an agent that can run them comes."""

from __future__ import annotations

from datetime import datetime
from typing import Iterable

from sqlalchemy import Connection, func, select, update

from steepy import events as ev
from steepy.registry.records import CS, add_events, event_row, load
from steepy.registry.tables import process_chains

_pc = process_chains.c
# the kinds of required capabilities of chains that may wait, and of those marked
_NEEDS = select(_pc.required_capabilities).where(
    _pc.status == CS.REGISTERED, _pc.required_capabilities != "[]").distinct()
_MARKED = select(_pc.required_capabilities).where(
    _pc.status == CS.REGISTERED, _pc.waiting.is_not(None)).distinct()
# each kind with the marks its chains have (the same chains as both above)
MARKS = select(_pc.required_capabilities, _pc.waiting).where(
    _pc.status == CS.REGISTERED,
    (_pc.required_capabilities != "[]") | _pc.waiting.is_not(None)).distinct()


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


def waiting_reasons(conn: Connection, offered: list[set[str]]) -> dict[str, str | None]:
    """Why chains needing each kind of capabilities wait (None: they need not), of the
    kinds that wait or were marked; empty: nothing to do."""
    kinds = list(conn.execute(_NEEDS).scalars())
    marked = list(conn.execute(_MARKED).scalars())
    reasons = {k: waiting_reason(load(k) or [], offered) for k in set(kinds) | set(marked)}
    return reasons if any(reasons.values()) or marked else {}


def marks_hold(marks: Iterable[tuple[str, str | None]], offered: list[set[str]]) -> bool:
    """Whether every chain's mark (as `MARKS` reads them) is already its reason with these
    offers: `flag_waiting` would then write nothing (a worker's every round while GPU
    chains wait for GPU workers that are down)."""
    reasons: dict[str, str | None] = {}
    for kind, mark in marks:
        if kind not in reasons:
            reasons[kind] = waiting_reason(load(kind) or [], offered)
        if reasons[kind] != mark:
            return False
    return True


def flag_waiting(conn: Connection, offered: list[set[str]], now: datetime,
                 reasons: dict[str, str | None] | None = None) -> list[tuple[str, str, int]]:
    """Mark (and unmark) the chains by `reasons` (`waiting_reasons` when not given); returns
    (submission id, reason, chains) of the events written."""
    if reasons is None:
        reasons = waiting_reasons(conn, offered)
    registered = _pc.status == CS.REGISTERED
    announced = []
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
            add_events(conn, [event_row(sid, ev.ChainWaiting(reason=reason, chains=count),
                                        None, now)])
        conn.execute(update(process_chains).where(*new).values(waiting=reason))
    return announced
