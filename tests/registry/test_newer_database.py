"""A database that a newer steepy migrated is refused in one line, not with Alembic's
traceback ("Can't locate revision"), and nothing in it is changed."""

from __future__ import annotations

from click.testing import CliRunner
from sqlalchemy import text

from steepy.cli import main
from steepy.registry.database import NewerDatabase, open_engine

import pytest


def _from_the_future(path) -> str:
    url = f"sqlite:///{path}"
    engine = open_engine(url)
    with engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = 'f00d_future'"))
    engine.dispose()
    return url


def _revision(url: str) -> list[str]:
    import sqlite3

    with sqlite3.connect(url.removeprefix("sqlite:///")) as db:
        return [row[0] for row in db.execute("SELECT version_num FROM alembic_version")]


def test_a_newer_database_is_refused_and_left_alone(tmp_path) -> None:
    url = _from_the_future(tmp_path / "steepy.db")
    with pytest.raises(NewerDatabase, match="migrated by a newer steepy .*f00d_future"):
        open_engine(url)
    assert _revision(url) == ["f00d_future"]


def test_the_command_says_it_in_one_line(tmp_path) -> None:
    url = _from_the_future(tmp_path / "steepy.db")
    result = CliRunner().invoke(main, ["list", "--db", url])
    assert result.exit_code == 4, result.output
    assert "Traceback" not in result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "newer steepy" in lines[0] and "upgrade steepy" in lines[0]
