"""Commands that only read (or change what is stored) never create a database: with no
database file they say so in one line, naming the file and how to point elsewhere, and exit
with code 2 (bad input: like an unknown id, not a database that cannot be used)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from steepy.cli import main

READING = [["list"], ["show", "x"], ["status", "x"], ["logs", "x"], ["events", "x"],
           ["search", "x"], ["notifications"], ["schedule", "list"], ["schedule", "show", "x"],
           ["cancel", "x"], ["retry", "x"], ["priority", "x", "1"], ["schedule", "pause", "x"],
           ["schedule", "resume", "x"], ["schedule", "remove", "x"], ["gc", "--dry-run"],
           ["wait", "x"]]


@pytest.fixture
def empty(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for key in ("STEEPY_SERVER", "STEEPY_DB_URL"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("STEEPY_GARBAGECOLLECTOR_RETENTION_SUBMISSIONS", "1d")  # gc: a policy
    return tmp_path


@pytest.mark.parametrize("args", READING, ids=" ".join)
def test_no_database_is_one_line_and_exit_2_and_nothing_is_created(empty: Path,
                                                                   args: list[str]) -> None:
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"No database at {empty / '.steepy' / 'steepy.db'}: nothing was submitted from here. "
        "Run this where you ran `steepy run' or `steepy submit', or give --db URL "
        "(STEEPY_DB_URL, db.url) or --server URL (STEEPY_SERVER).\n")
    assert list(empty.iterdir()) == []


def test_a_missing_db_option_file_is_named_and_not_created(empty: Path) -> None:
    result = CliRunner().invoke(main, ["list", "--db", "sqlite:///elsewhere/my.db"])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"No database at {empty / 'elsewhere' / 'my.db'}: ")
    assert list(empty.iterdir()) == []


def test_what_stores_still_creates_it_and_then_reading_works(empty: Path) -> None:
    (empty / "w.yaml").write_text("api: 4.7.0\nname: nothing\nactions: []\n")
    submitted = CliRunner().invoke(main, ["submit", "w.yaml"], catch_exceptions=False)
    assert submitted.exit_code == 0, submitted.output
    assert (empty / ".steepy" / "steepy.db").is_file()
    listed = CliRunner().invoke(main, ["list"], catch_exceptions=False)
    assert listed.exit_code == 0 and "nothing" in listed.stdout
