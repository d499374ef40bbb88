"""A database URL steepy cannot open is blamed where it was written: Steep's
`jdbc:postgresql://...' in conf/steep.yaml names the file, line and column, in STEEPY_DB_URL
the variable, in `--db' the option; each says the `postgresql+psycopg://' URL to write."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from steepy.cli import main
from steepy.config import load_config
from steepy.errors import InputError

STEEP_CONF = """\
steep:
  db:
    driver: postgresql
    url: jdbc:postgresql://db.example.org:5432/steep
    username: steep
"""
SUGGESTED = "postgresql+psycopg://USER:PASSWORD@db.example.org:5432/steep"


def _only_problem(directory: Path, monkeypatch, environ: dict | None = None):
    for name, value in (environ or {}).items():
        monkeypatch.setenv(name, value)
    with pytest.raises(InputError) as caught:
        load_config(directory)
    [problem] = caught.value.problems
    return problem


def test_a_jdbc_url_in_steeps_file_is_located_with_the_url_to_write(tmp_path, monkeypatch):
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "steep.yaml").write_text(STEEP_CONF)
    problem = _only_problem(tmp_path, monkeypatch)
    assert (problem.file, problem.line, problem.column, problem.path) == (
        str(tmp_path / "conf" / "steep.yaml"), 4, 10, "db.url")
    assert SUGGESTED in problem.message and "JDBC" in problem.message


def test_a_jdbc_url_in_the_environment_names_the_variable(tmp_path, monkeypatch):
    problem = _only_problem(tmp_path, monkeypatch,
                            {"STEEPY_DB_URL": "jdbc:postgresql://db.example.org:5432/steep"})
    assert (problem.file, problem.path) == ("$STEEPY_DB_URL", "db.url")
    assert SUGGESTED in problem.message


@pytest.mark.parametrize("url, words", [
    ("steep.db", "not a database URL"),
    ("mysql://localhost/steep", "unsupported database `mysql'"),
    ("jdbc:h2:mem:steep", "JDBC URL"),
    # a driver steepy does not ship: was accepted, then a traceback at first use
    ("postgresql+psycopg2://localhost/steep", "unsupported driver `postgresql+psycopg2'"),
    ("sqlite+aiosqlite:///s.db", "unsupported driver `sqlite+aiosqlite'"),
])
def test_other_urls_steepy_cannot_open_are_located_too(tmp_path, monkeypatch, url, words):
    (tmp_path / "steepy.yaml").write_text(f"db:\n  url: {url}\n")
    problem = _only_problem(tmp_path, monkeypatch)
    assert (Path(problem.file).name, problem.line, problem.column) == ("steepy.yaml", 2, 8)
    assert words in problem.message and "postgresql+psycopg://" in problem.message


@pytest.mark.parametrize("url", ["sqlite:///.steepy/steepy.db", "sqlite://", "sqlite+pysqlite://",
                                 "postgresql+psycopg://steep:secret@localhost:5432/steep",
                                 "postgresql://localhost/steep"])
def test_urls_steepy_opens_are_taken(tmp_path, url):
    (tmp_path / "steepy.yaml").write_text(f"db.url: '{url}'\n")
    assert load_config(tmp_path)["db.url"] == url


def test_the_command_blames_the_file_not_the_db_option(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "steep.yaml").write_text(STEEP_CONF)
    result = CliRunner().invoke(main, ["list"])
    assert result.exit_code == 2, result.output
    assert "conf/steep.yaml:4:10: db.url: " in result.output and SUGGESTED in result.output
    assert "--db" not in result.output
    assert not (tmp_path / ".steepy").exists()  # nothing stored


def test_a_jdbc_url_given_to_db_is_blamed_on_the_option_with_the_url_to_write(tmp_path,
                                                                              monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["list", "--db", "jdbc:postgresql://db.example.org:5432/steep"])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("--db: ") and SUGGESTED in result.output


@pytest.mark.parametrize("url", [
    "jdbc:postgresql://db.example.org:5432/steep?user=steep&password=s3cret-pw",
    "jdbc:postgresql://steep:s3cret-pw@db.example.org:5432/steep",
    "mysql://steep:s3cret-pw@localhost/steep",
    "jdbc:mysql://db.example.org/steep?password=s3cret-pw",
])
def test_no_message_shows_a_password(tmp_path, monkeypatch, url):
    problem = _only_problem(tmp_path, monkeypatch, {"STEEPY_DB_URL": url})
    assert "s3cret-pw" not in problem.message and "***" in problem.message
    if url.startswith("jdbc:postgresql"):
        assert SUGGESTED in problem.message


def test_white_space_at_the_end_of_a_url_is_located(tmp_path, monkeypatch):
    """A YAML block scalar (`url: |`) keeps its newline: the database opened would be the
    file `x.db\\n', and `list` said no database was there."""
    (tmp_path / "steepy.yaml").write_text('db:\n  url: "sqlite:///x.db\\n"\n')
    problem = _only_problem(tmp_path, monkeypatch)
    assert (Path(problem.file).name, problem.line, problem.column) == ("steepy.yaml", 2, 8)
    assert "white space at its end" in problem.message
