"""An engine claims among the submissions it drives (`submission_id IN (...)`): the chains of
one submission come in claim order (priority descending, then oldest) straight from
`ix_chains_submission`, with no sort and without walking the REGISTERED chains of other
submissions (migration 0015). On PostgreSQL the status index made that 1.3 ms per claim at
10,000 chains."""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import text

from steepy.registry.database import open_engine
from steepy.registry.hotpath import CLAIM_WINDOW, HotPath
from steepy.registry.tables import process_chains, submissions

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _fill(engine) -> None:
    """A submission with 1,000 REGISTERED chains behind another one's 1,000 of higher
    priority (fewer, and PostgreSQL's planner would sort them rather than read an index)."""
    with engine.begin() as conn:
        conn.execute(submissions.insert(), [
            {"id": s, "status": "RUNNING", "workflow": "{}", "created_time": NOW}
            for s in ("mine", "other")])
        conn.execute(process_chains.insert(), [
            {"id": f"other-{i}", "submission_id": "other", "status": "REGISTERED",
             "priority": 5, "chain": "{}", "created_time": NOW} for i in range(1000)])
        conn.execute(process_chains.insert(), [
            {"id": f"mine-{i}", "submission_id": "mine", "status": "REGISTERED",
             "priority": i % 3, "chain": "{}", "created_time": NOW} for i in range(1000)])
        conn.execute(text("ANALYZE process_chains" if engine.dialect.name == "postgresql"
                          else "ANALYZE"))


def test_the_claim_of_a_submission_reads_its_index_in_claim_order(database_url) -> None:
    engine = open_engine(database_url)
    try:
        _fill(engine)
        postgres = engine.dialect.name == "postgresql"
        hot = HotPath(postgres)
        raw = engine.raw_connection()
        try:
            cur = raw.cursor()
            order = [row[0] for row in hot.candidates(cur, frozenset({"mine"})).fetchall()]
            want = [f"mine-{i}" for p in (2, 1, 0) for i in range(1000) if i % 3 == p]
            assert order == want[:CLAIM_WINDOW]
            statement = hot._candidates_of[1]
            cur.execute(("EXPLAIN " if postgres else "EXPLAIN QUERY PLAN ") + statement,
                        ("REGISTERED", "mine"))
            plan = " ".join(str(row[-1]) for row in cur.fetchall())
            raw.rollback()
        finally:
            raw.close()
    finally:
        engine.dispose()
    assert "ix_chains_submission " in plan  # (not ix_chains_submission_seq)
    assert "Sort" not in plan and "TEMP B-TREE" not in plan
