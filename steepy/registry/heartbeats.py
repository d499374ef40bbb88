"""An engine's heartbeat, written: its agents' rows (new ones with an `AgentArrived` event),
whose `stateChangedTime` (Steep's) is now when an agent went busy, idle or to another chain
since its last heartbeat, else as it was; and the leases of the submissions it drives.

On PostgreSQL an engine's heartbeat is one round trip (`beat_at_once`): every agent's row in
one statement, the leases in another, BEGIN and COMMIT with them (together.py). It was one
round trip per agent, one for the leases and one for COMMIT, each a wake-up of an idle
worker every 2 s.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ARRAY, Connection, Integer, String, Text, bindparam, case, func, insert, \
    select, update

from steepy import events as ev
from steepy.registry.dialect import Dialect
from steepy.registry.records import SS, add_event, dump
from steepy.registry.tables import agents, submissions
from steepy.registry.together import driver_sql

_sc = submissions.c
_NOW = bindparam("b_now", type_=agents.c.last_seen.type)
_UNTIL = bindparam("b_until", type_=_sc.lease_until.type)


def _beat_statements() -> tuple[Any, Any]:
    """The heartbeat's two statements, built once (building them took most of its time):
    an agent's row and the leases of the engine's submissions."""
    chain = bindparam("b_chain", type_=agents.c.chain_id.type)
    agent = update(agents).where(agents.c.id == bindparam("b_id")).values(
        capabilities=bindparam("b_capabilities"), last_seen=_NOW, chain_id=chain,
        owner=bindparam("b_owner"), host=bindparam("b_host"), pid=bindparam("b_pid"),
        state_changed_time=case((agents.c.chain_id.is_not_distinct_from(chain),
                                 agents.c.state_changed_time), else_=_NOW))
    leases = update(submissions).where(_sc.owner == bindparam("b_owner"),
                                       _sc.status == SS.RUNNING).values(lease_until=_UNTIL)
    return agent, leases


def _agents_at_once() -> Any:
    """(PostgreSQL) Every agent's row in one statement, from arrays of their values; returns
    the ids of the rows it found."""
    given = func.unnest(*(bindparam(f"b_{name}s", type_=ARRAY(kind)) for name, kind in (
        ("id", String), ("capabilities", Text), ("chain", String), ("host", Text),
        ("pid", Integer)))).table_valued("id", "capabilities", "chain", "host", "pid") \
        .render_derived(name="given")
    return update(agents).where(agents.c.id == given.c.id).values(
        capabilities=given.c.capabilities, last_seen=_NOW, chain_id=given.c.chain,
        owner=bindparam("b_owner"), host=given.c.host, pid=given.c.pid,
        state_changed_time=case((agents.c.chain_id.is_not_distinct_from(given.c.chain),
                                 agents.c.state_changed_time), else_=_NOW)
    ).returning(agents.c.id)


_BEAT_AGENT, _BEAT_LEASES = _beat_statements()
_BEAT_AGENTS = _agents_at_once()
# PostgreSQL: the leases of submissions whose rows a transaction updates (a round of this
# engine's controller, a priority given to 100,000 chains) are extended at the next heartbeat
# rather than this one waiting for it: the agents' rows must commit on time (fencing.py).
# (Rows only referenced by new chains or events are not skipped: FOR NO KEY UPDATE; and a
# lease that ran out meanwhile is not taken over while the engine's agents beat:
# leases._lease_over)
_BEAT_FREE_LEASES = update(submissions).where(_sc.id.in_(
    select(_sc.id).where(_sc.owner == bindparam("b_owner"), _sc.status == SS.RUNNING)
    .with_for_update(skip_locked=True, key_share=True))).values(lease_until=_UNTIL)


def _values(a: dict, owner: str) -> dict:
    return {"capabilities": dump(sorted(a.get("capabilities", []))), "chain_id": a.get("chain_id"),
            "owner": owner, "host": a.get("host"), "pid": a.get("pid")}


def write_heartbeat(conn: Connection, dialect: Dialect, owner: str, agent_rows: list[dict],
                    lease_s: float, now: datetime) -> None:
    """The heartbeat in the caller's transaction, a statement per agent (a new agent's row
    is inserted, with its event)."""
    for a in agent_rows:
        values = _values(a, owner)
        changed = conn.execute(_BEAT_AGENT, {
            "b_id": a["id"], "b_now": now, "b_capabilities": values["capabilities"],
            "b_chain": values["chain_id"], "b_owner": owner, "b_host": values["host"],
            "b_pid": values["pid"]})
        if changed.rowcount == 0:
            conn.execute(insert(agents).values(id=a["id"], start_time=now, last_seen=now,
                                               state_changed_time=now, **values))
            add_event(conn, None, ev.AgentArrived(
                agent=a["id"], host=a.get("host"), capabilities=sorted(a.get("capabilities", []))))
    conn.execute(_BEAT_FREE_LEASES if dialect.postgres else _BEAT_LEASES,
                 {"b_owner": owner, "b_until": now + timedelta(seconds=lease_s)})


def beat_at_once(conn: Connection, dialect: Dialect, owner: str, agent_rows: list[dict],
                 lease_s: float, now: datetime) -> list[dict]:
    """(PostgreSQL, first in its transaction) The heartbeat of agents whose rows are there,
    committed in one round trip; returns the rows of those that were not there (new, or
    forgotten by another engine: `write_heartbeat` writes them, with their events)."""
    driver = conn.connection.driver_connection
    values = [_values(a, owner) for a in agent_rows]
    with dialect.batch(conn):
        found = driver.cursor()
        found.execute(*driver_sql(conn, _BEAT_AGENTS, {
            "b_ids": [a["id"] for a in agent_rows], "b_now": now, "b_owner": owner,
            **{f"b_{name}s": [v[key] for v in values] for name, key in (
                ("capabilities", "capabilities"), ("chain", "chain_id"), ("host", "host"),
                ("pid", "pid"))}}))
        driver.cursor().execute(*driver_sql(conn, _BEAT_FREE_LEASES, {
            "b_owner": owner, "b_until": now + timedelta(seconds=lease_s)}))
        dialect.commit_in_batch(conn)
    there = {row[0] for row in found.fetchall()}
    return [a for a in agent_rows if a["id"] not in there]
