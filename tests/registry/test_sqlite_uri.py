"""An SQLite database given as a URI (`sqlite:///file:x.db?mode=ro&uri=true'): its file name
is SQLite's to read out of the URI, so steepy does not take `file:x.db' for a path. A command
that only reads opens the database that exists instead of saying there is none, and opening
it makes no `file:' folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from steepy.cli import main
from steepy.registry import open_registry
from steepy.registry.database import sqlite_file


@pytest.fixture
def database(tmp_path: Path, monkeypatch) -> Path:
    """A real database file with one submission in it; the working directory beside it."""
    monkeypatch.chdir(tmp_path)
    for key in ("STEEPY_SERVER", "STEEPY_DB_URL"):
        monkeypatch.delenv(key, raising=False)
    (tmp_path / "w.yaml").write_text("api: 4.7.0\nname: stored\nactions: []\n")
    path = tmp_path / "steepy.db"
    submitted = CliRunner().invoke(main, ["submit", "w.yaml", "--db", f"sqlite:///{path}"],
                                   catch_exceptions=False)
    assert submitted.exit_code == 0, submitted.output
    return path


@pytest.mark.parametrize("query", ["uri=true", "mode=ro&uri=true"])
def test_a_uri_names_no_file_steepy_can_tell(database: Path, query: str) -> None:
    assert sqlite_file(f"sqlite:///file:{database}?{query}") is None
    assert sqlite_file(f"sqlite:///{database}") == database  # a plain URL: its file


@pytest.mark.parametrize("query", ["uri=true", "mode=ro&uri=true"])
def test_reading_commands_open_a_database_given_as_a_uri(database: Path, query: str) -> None:
    result = CliRunner().invoke(main, ["list", "--db", f"sqlite:///file:{database}?{query}"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "stored" in result.stdout and "No database" not in result.output
    assert sorted(p.name for p in database.parent.iterdir()
                  if not p.name.startswith("steepy.db")) == ["w.yaml"]  # no `file:' folder


def test_the_registry_opens_a_uri_without_making_a_folder(database: Path) -> None:
    registry = open_registry(f"sqlite:///file:{database}?uri=true")
    try:
        assert registry.views.count_submissions() == 1
    finally:
        registry.close()
    assert not (database.parent / "file:").exists()
