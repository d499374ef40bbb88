"""Many processes opening one new database at the same moment: exactly one migrates, the
others wait for it and go on (an advisory lock on PostgreSQL, the write lock on SQLite)."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from sqlalchemy import text

from steepy.registry.database import open_engine
from steepy.registry.revisions import head_revisions
import pytest

pytestmark = [pytest.mark.process]

OPENERS = 4


def _open_together(url: str) -> list[BaseException]:
    """OPENERS threads, each with an engine of its own, open `url` at the same instant."""
    barrier = threading.Barrier(OPENERS)
    errors: list[BaseException] = []

    def open_one() -> None:
        barrier.wait()
        try:
            open_engine(url).dispose()
        except BaseException as e:  # noqa: BLE001 - any failure is the finding
            errors.append(e)

    threads = [threading.Thread(target=open_one) for _ in range(OPENERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return errors


def _revisions(url: str) -> set[str]:
    engine = open_engine(url)
    try:
        with engine.connect() as conn:
            return set(conn.execute(text("SELECT version_num FROM alembic_version")).scalars())
    finally:
        engine.dispose()


def test_concurrent_first_opens_all_succeed(postgres_server, tmp_path, request) -> None:
    """20 new databases of each kind, each opened by four engines at once."""
    for attempt in range(20):
        for url in (request.getfixturevalue("postgres_url") if attempt == 0 else _fresh_pg(request),
                    f"sqlite:///{tmp_path / f'race{attempt}.db'}"):
            errors = _open_together(url)
            assert not errors, f"{url}: {errors[0]!r}"
            assert _revisions(url) == head_revisions()


def _fresh_pg(request) -> str:
    # a new database per round: the fixture gives one per test, so ask for more by hand
    import psycopg
    from sqlalchemy.engine import make_url

    from steepy.model.ids import unique_id

    server = make_url(request.getfixturevalue("postgres_server"))
    name = f"t_{unique_id().lower()}"
    admin = server.set(drivername="postgresql", database="postgres").render_as_string(
        hide_password=False)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')

    def drop() -> None:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    request.addfinalizer(drop)
    return server.set(database=name).render_as_string(hide_password=False)


def test_two_cli_processes_on_a_new_database(database_url) -> None:
    """`steepy list & steepy list` on a new database: both succeed, neither prints a traceback.
    (An SQLite file that is not there is refused by commands that only read: an empty one is
    a new database.)"""
    if database_url.startswith("sqlite:///"):
        Path(database_url.removeprefix("sqlite:///")).touch()
    command = [sys.executable, "-m", "steepy.cli", "list", "--db", database_url]
    procs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert "Traceback" not in err
