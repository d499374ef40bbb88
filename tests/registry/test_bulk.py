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
from steepy.registry import bulk
from steepy.registry.tables import events, log_chunks, process_chains

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


def test_values_of_one_column_may_mix_kinds_and_keywords_are_names(database_url: str) -> None:
    """What SQLAlchemy's insert took, the bulk path takes: a Float column given ints and
    floats, an Integer column given a bool; a column named by an SQL keyword (`offset')
    and bytes."""
    registry = open_registry(database_url)
    registry.requests.add_submission(Submission(id="s", workflow=Workflow(name="s"), name="s"))
    chains = [{**row, "progress": [1, 0.5, None, 0, 0.25, 1][i], "priority": [True, 2][i % 2]}
              for i, row in enumerate(_chains("mix-"))]
    chunks = [{"chain_id": "mix-0", "run_number": 1, "offset": 10 * i, "data": b"\x00\xff" * i,
               "time": T0} for i in range(3)]
    with registry.db.write() as conn:
        insert_rows(conn, process_chains, chains)
        insert_rows(conn, log_chunks, chunks)
    with registry.db.read() as conn:
        read = _read(conn, process_chains, "mix-", {"seq"})
        got = conn.execute(select(log_chunks.c.offset, log_chunks.c.data)
                           .order_by(log_chunks.c.offset)).all()
    assert [r["progress"] for r in read] == [1.0, 0.5, None, 0.0, 0.25, 1.0]
    assert [r["priority"] for r in read] == [1, 2, 1, 2, 1, 2]
    assert [(o, bytes(d)) for o, d in got] == [(0, b""), (10, b"\x00\xff"),
                                              (20, b"\x00\xff\x00\xff")]


def test_many_rows_are_one_statement_and_large_ones_several_in_order(postgres_url: str,
                                                                     monkeypatch) -> None:
    """PostgreSQL: the rows of one call are written by one statement (they share the
    command id `cmin'); past `CHUNK_TEXT' characters of text, by several, in order."""
    registry = open_registry(postgres_url)
    registry.requests.add_submission(Submission(id="s", workflow=Workflow(name="s"), name="s"))

    def write(prefix: str, n: int) -> tuple[int, list[str]]:
        rows = [{"submission_id": "s", "chain_id": f"{prefix}{(i * 37) % n:03d}", "time": T0,
                 "kind": "chain.registered", "data": "{}"} for i in range(n)]
        with registry.db.write() as conn:
            insert_rows(conn, events, rows)
        with registry.db.read() as conn:
            statements = conn.exec_driver_sql(
                "SELECT count(DISTINCT cmin::text) FROM events WHERE chain_id LIKE %s",
                (f"{prefix}%",)).scalar()
            ids = conn.execute(select(events.c.chain_id).where(
                events.c.chain_id.like(f"{prefix}%")).order_by(events.c.id)).scalars().all()
        assert ids == [r["chain_id"] for r in rows]
        return statements, ids

    assert write("one-", 200)[0] == 1
    # a row here holds 26 characters of text: 38 rows a statement, 6 statements
    monkeypatch.setattr(bulk, "CHUNK_TEXT", 1000)
    assert write("few-", 200)[0] == 6


def test_a_string_too_long_for_its_column_is_refused_not_cut(postgres_url: str) -> None:
    """PostgreSQL checks a `varchar(64)' column's length (SQLite does not): the rows are
    refused as SQLAlchemy's insert refused them; a cast to the column's own type would cut
    the string."""
    registry = open_registry(postgres_url)
    registry.requests.add_submission(Submission(id="s", workflow=Workflow(name="s"), name="s"))
    rows = _events("long-")
    rows[2] = {**rows[2], "kind": "k" * 49}  # events.kind is String(48)
    try:
        with registry.db.write() as conn:
            insert_rows(conn, events, rows)
    except Exception as e:
        assert "too long" in str(e)
    else:
        raise AssertionError("a kind longer than its column was written")
    with registry.db.read() as conn:
        assert conn.execute(select(events).where(events.c.kind != "submission.status")).all() == []
