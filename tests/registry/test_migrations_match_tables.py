"""The Alembic migrations build exactly the schema `tables.py` declares: same tables,
columns (type family, nullability), indexes and foreign keys, on SQLite and PostgreSQL."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from steepy.registry.database import open_engine
from steepy.registry.tables import metadata


def test_migrated_schema_is_tables_py(database_url) -> None:
    engine = open_engine(database_url)  # runs every migration on the empty database
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"compare_type": True})
            differences = [d for d in compare_metadata(context, metadata)
                           if not (isinstance(d, tuple) and d[0] == "remove_table"
                                   and d[1].name == "alembic_version")]
    finally:
        engine.dispose()
    assert differences == []
