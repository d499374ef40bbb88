"""Rows written in the driver's terms (steepy/registry/bulk.py) read back exactly as the same
rows written through SQLAlchemy, on SQLite and on PostgreSQL: times, a column's default
where a row leaves it out, statuses, NULLs."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from sqlalchemy import insert, select

from steepy.model import Submission, Workflow
from steepy.model.submission import ProcessChainStatus as CS
from steepy.registry import open_registry
from steepy.registry.bulk import insert_rows
from steepy.registry.tables import events, process_chains

T0 = datetime(2026, 11, 28, 4, 5, 6, 789012, tzinfo=timezone.utc)


def _chains(prefix: str) -> list[dict]:
    # no `cancel_requested': its default (False) is written
    return [{"id": f"{prefix}{i}", "submission_id": "s", "priority": i - 1,
             "status": CS.SUCCESS if i % 2 else CS.REGISTERED, "required_capabilities": "[]",
             "chain": '{"executables":[]}', "results": None if i % 2 else '{"o":["a"]}',
             "next_run_at": None if i % 3 else T0 + timedelta(microseconds=i),
             "created_time": T0, "reused": None} for i in range(6)]


def _events(prefix: str) -> list[dict]:
    rows = [{"submission_id": "s" if i % 2 else None, "chain_id": f"{prefix}{i}",
             "time": T0 + timedelta(seconds=i, microseconds=7 * i), "kind": "chain.registered",
             "data": '{"executables":1}'} for i in range(5)]
    # the same instant as the first, in another zone: SQLite keeps each one's wall clock
    rows.append({**rows[0], "chain_id": f"{prefix}5",
                 "time": T0.astimezone(timezone(timedelta(hours=1)))})
    return rows


def _read(conn, table, prefix: str, skip: set[str]) -> list[dict]:
    rows = conn.execute(select(table).where(table.c.chain_id.like(f"{prefix}%") if
                                            table is events else table.c.id.like(f"{prefix}%"))
                        .order_by(table.c.chain_id if table is events else table.c.id))
    return [{k: (v.removeprefix(prefix) if isinstance(v, str) and v.startswith(prefix) else v)
             for k, v in row._mapping.items() if k not in skip} for row in rows]


def test_rows_read_back_as_sqlalchemy_writes_them(database_url: str) -> None:
    registry = open_registry(database_url)
    registry.requests.add_submission(Submission(id="s", workflow=Workflow(name="s"), name="s"))
    with registry.db.write() as conn:
        insert_rows(conn, process_chains, _chains("bulk-"))
        insert_rows(conn, events, _events("bulk-"))
        conn.execute(insert(process_chains), _chains("core-"))
        conn.execute(insert(events), _events("core-"))
    with registry.db.read() as conn:
        for table, skip in ((process_chains, {"seq"}), (events, {"id"})):
            bulk = _read(conn, table, "bulk-", skip)
            assert len(bulk) == 6
            assert bulk == _read(conn, table, "core-", skip)
        assert {r["cancel_requested"] for r in _read(conn, process_chains, "bulk-", set())} \
            == {False}
        times = [r["time"] for r in _read(conn, events, "bulk-", set())][:5]
        assert [t.replace(tzinfo=timezone.utc) for t in times] == \
            [T0 + timedelta(seconds=i, microseconds=7 * i) for i in range(5)]


def test_no_rows_write_nothing(database_url: str) -> None:
    registry = open_registry(database_url)
    with registry.db.write() as conn:
        insert_rows(conn, events, [])
    with registry.db.read() as conn:
        assert conn.execute(select(events)).all() == []


def test_rows_are_numbered_in_their_order(database_url: str) -> None:
    """Events' ids follow the order of the rows, which readers of the timeline rely on (a
    chain's `started' before its `finished' in one transaction); on PostgreSQL the rows are
    one statement (unnest), whose order is kept by its ordinality."""
    registry = open_registry(database_url)
    registry.requests.add_submission(Submission(id="s", workflow=Workflow(name="s"), name="s"))
    order = [f"c{(i * 7919) % 3000:04d}" for i in range(3000)]  # not sorted by any column
    rows = [{"submission_id": "s", "chain_id": chain_id, "time": T0 - timedelta(seconds=i),
             "kind": "chain.registered", "data": "{}"} for i, chain_id in enumerate(order)]
    with registry.db.write() as conn:
        insert_rows(conn, events, rows)
    with registry.db.read() as conn:
        read = conn.execute(select(events.c.chain_id).where(events.c.chain_id.is_not(None))
                            .order_by(events.c.id)).scalars().all()
    assert read == order


def test_a_failing_row_writes_none(database_url: str) -> None:
    """The rows are one unit: one that breaks a constraint (a chain of no submission) and
    the transaction writes none of them."""
    registry = open_registry(database_url)
    registry.requests.add_submission(Submission(id="s", workflow=Workflow(name="s"), name="s"))
    rows = _chains("all-")
    rows[3] = {**rows[3], "submission_id": "nobody"}
    try:
        with registry.db.write() as conn:
            insert_rows(conn, process_chains, rows)
    except Exception as e:  # (the driver's IntegrityError, through SQLAlchemy or not)
        assert "foreign key" in str(e).lower()
    else:
        raise AssertionError("a chain of no submission was written")
    with registry.db.read() as conn:
        assert conn.execute(select(process_chains)).all() == []
