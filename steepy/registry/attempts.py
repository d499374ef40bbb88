"""Attempts of runs that were cut: what the run after them goes on from, and how the
attempts still running at the cut are closed (extensions 4: every attempt is a record)."""

from __future__ import annotations

from sqlalchemy import Connection, func, select, update

from steepy.model.attempt import AGENT_LOST, CANCELLED, INTERRUPTED, RUNNING, AttemptRecord
from steepy.model.common import utcnow
from steepy.registry.tables import attempts, runs


# runs whose end leaves their attempts to the run after them: their engine died (AGENT_LOST),
# or stopped and gave the chain back (INTERRUPTED)
CUT_RUNS = (AGENT_LOST, INTERRUPTED)


def cut_history(conn: Connection, chain_id: str, last: int) -> list[AttemptRecord]:
    """The attempts of the cut runs right before run `last' + 1 (run `last' and the cut runs
    before it, oldest first), in the order they were made; [] when run `last' was not cut."""
    statuses = conn.execute(select(runs.c.run_number, runs.c.status).where(
        runs.c.chain_id == chain_id, runs.c.run_number <= last)
        .order_by(runs.c.run_number.desc())).all()
    numbers = []
    for number, status in statuses:
        if status not in CUT_RUNS:
            break
        numbers.append(number)
    if not numbers:
        return []
    rows = conn.execute(select(attempts).where(
        attempts.c.chain_id == chain_id, attempts.c.run_number.in_(numbers))
        .order_by(attempts.c.run_number, attempts.c.id)).all()
    return [AttemptRecord.from_row(r) for r in rows]


def close_cut_attempts(conn: Connection, chain_id: str, run_number: int, outcome: str,
                       message: str, stopped: bool = False) -> None:
    """The attempts of this run that were still running when it was cut end as `outcome';
    `stopped': also the one its stopping engine cancelled (the agent stored it CANCELLED
    as it ended the tool: no user cancelled it)."""
    cut = [RUNNING, CANCELLED] if stopped else [RUNNING]
    conn.execute(update(attempts).where(
        attempts.c.chain_id == chain_id, attempts.c.run_number == run_number,
        attempts.c.outcome.in_(cut)).values(
            outcome=outcome, end_time=func.coalesce(attempts.c.end_time, utcnow()),
            message=message))
