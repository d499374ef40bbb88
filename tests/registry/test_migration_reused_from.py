"""Migration 0017 fills `process_chains.reused_from` of the chains reused before it from
their JSON marker, on SQLite and PostgreSQL (the garbage collector relies on it)."""

from __future__ import annotations

from alembic import command
from alembic.config import Config as AlembicConfig
from sqlalchemy import create_engine, insert, text

from steepy.model.common import utcnow
from steepy.registry.database import migrate
from steepy.registry.revisions import MIGRATIONS
from steepy.registry.tables import process_chains, submissions


def _upgrade(engine, revision: str) -> None:
    with engine.begin() as connection:
        config = AlembicConfig()
        config.set_main_option("script_location", str(MIGRATIONS))
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


def test_chains_reused_before_0017_name_the_submission_they_reused(database_url) -> None:
    engine = create_engine(database_url)
    try:
        _upgrade(engine, "0016")
        now = utcnow()
        with engine.begin() as conn:  # the columns a database at 0016 has (and defaults)
            conn.execute(insert(submissions).values(id="s2", status="SUCCESS", workflow="{}",
                                                    created_time=now))
            conn.execute(insert(process_chains), [
                {"id": chain_id, "submission_id": "s2", "status": "SUCCESS", "chain": "{}",
                 "created_time": now, "reused": reused}
                for chain_id, reused in (("c1", '{"submissionId":"s1","processChainId":"a"}'),
                                         ("c2", None))])
        migrate(engine)
        with engine.connect() as conn:
            found = dict(conn.execute(text("SELECT id, reused_from FROM process_chains")).all())
        assert found == {"c1": "s1", "c2": None}
    finally:
        engine.dispose()
