"""The Alembic migrations build exactly the schema `tables.py` declares: same tables,
columns (type family, nullability), indexes and foreign keys, on SQLite and PostgreSQL; and
an empty database made at once from `tables.py` (what a first start does) is the same as one
that replayed every migration, rows and revision included."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from sqlalchemy import create_engine, inspect, text

from steepy.registry.database import migrate, open_engine
from steepy.registry.tables import metadata


def _replayed(url: str):
    engine = create_engine(url)
    migrate(engine, replay=True)  # runs every migration on the empty database
    return engine


def test_migrated_schema_is_tables_py(database_url) -> None:
    engine = _replayed(database_url)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"compare_type": True})
            differences = [d for d in compare_metadata(context, metadata)
                           if not (isinstance(d, tuple) and d[0] == "remove_table"
                                   and d[1].name == "alembic_version")]
    finally:
        engine.dispose()
    assert differences == []


def _described(engine) -> dict:
    """Everything a database holds that the schema decides, in comparable form."""
    out = {}
    with engine.connect() as conn:
        found = inspect(conn)
        for table in sorted(found.get_table_names()):
            key = lambda d: str(sorted(d.items()))  # noqa: E731
            out[table] = {
                "columns": [(c["name"], str(c["type"]), c["nullable"], str(c.get("default")))
                            for c in found.get_columns(table)],
                "primary key": found.get_pk_constraint(table)["constrained_columns"],
                "indexes": sorted((i["name"], tuple(i["column_names"]), bool(i["unique"]))
                                  for i in found.get_indexes(table)),
                "unique": sorted(tuple(u["column_names"])
                                 for u in found.get_unique_constraints(table)),
                "foreign keys": sorted((f["referred_table"], tuple(f["constrained_columns"]),
                                        str(f.get("options"))) for f in found.get_foreign_keys(table)),
                "rows": sorted(key(dict(r._mapping))
                               for r in conn.execute(text(f'SELECT * FROM "{table}"'))),
            }
        # a random id each (migration 0018): one row of 32 characters, compared apart
        ids = conn.execute(text("SELECT id FROM database_identity")).scalars().all()
        out["database_identity"]["rows"] = [len(i) for i in ids]
        out["the id"] = ids
    return out


def test_a_new_database_made_at_once_is_the_migrated_one(database_url, tmp_path) -> None:
    if database_url.startswith("sqlite"):
        other = f"sqlite:///{tmp_path / 'replayed.db'}"
    else:  # a second empty database on the same server
        import psycopg
        from sqlalchemy.engine import make_url

        url = make_url(database_url)
        admin = url.set(drivername="postgresql", database="postgres").render_as_string(
            hide_password=False)
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{url.database}_r"')
        other = url.set(database=f"{url.database}_r").render_as_string(hide_password=False)
    at_once, replayed = open_engine(database_url), _replayed(other)
    try:
        assert "alembic_version" in inspect(at_once).get_table_names()
        made, migrated = _described(at_once), _described(replayed)
        assert made.pop("the id") != migrated.pop("the id")  # each database its own
        assert made == migrated
        assert made["database_identity"]["rows"] == [32]
        migrate(at_once)  # a later start finds it up to date
    finally:
        at_once.dispose()
        replayed.dispose()
        if not database_url.startswith("sqlite"):
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{url.database}_r" WITH (FORCE)')
