"""The command line opens the database and reads services and macros through the API's
setup (steepy.api.setup.LocalSetup), so both refuse the same things with the same words: the
CLI only prints them (exit code 2) and adds its own advice. And the hint where services come
from follows only a problem about a service that is not defined, not every failure."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import steepy
from steepy.api.setup import LocalSetup
from steepy.cli import main
from steepy.cli.setup import RUN_WHERE, WHERE_SERVICES, CliSetup

JDBC = "jdbc:postgresql://db.example.org:5432/steep"
SUGGESTED = "postgresql+psycopg://USER:PASSWORD@db.example.org:5432/steep"
HINT = "To load services, " + WHERE_SERVICES


@pytest.fixture
def here(tmp_path, monkeypatch):
    """An empty folder as the working directory: no steepy.yaml, no services/, no database."""
    monkeypatch.chdir(tmp_path)
    for name in ("STEEPY_DB_URL", "STEEPY_SERVER", "STEEPY_SERVICES", "STEEPY_MACROS"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def _invoke(*args: str):
    return CliRunner().invoke(main, list(args), prog_name="steepy", catch_exceptions=False)


def test_the_cli_setup_is_the_api_setup() -> None:
    assert issubclass(CliSetup, LocalSetup)
    assert CliSetup.open_registry is not LocalSetup.open_registry  # it only maps the errors


def test_no_database_is_the_same_sentence_from_the_api_and_the_cli(here) -> None:
    with pytest.raises(steepy.NotFound) as raised:
        LocalSetup().open_registry(None, create=False)
    said = str(raised.value)
    assert said == (f"No database at {here / '.steepy' / 'steepy.db'}: nothing was submitted "
                    "from here.")
    result = _invoke("list")
    assert result.exit_code == 2
    assert result.stderr == f"{said} {RUN_WHERE}\n"
    assert list(here.iterdir()) == []


def test_steeps_jdbc_url_is_refused_with_the_url_to_write_by_both(here) -> None:
    with pytest.raises(steepy.InputError) as raised:
        LocalSetup().open_registry(JDBC, create=False)
    [problem] = raised.value.problems
    assert problem.file == "db" and SUGGESTED in problem.message
    result = _invoke("list", "--db", JDBC)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"--db: {problem.message}\n")
    assert list(here.iterdir()) == []


def test_a_yaml_syntax_error_with_no_services_gets_no_services_hint(here) -> None:
    (here / "w.yaml").write_text("api: 4.7.0\nactions: [\n")
    result = _invoke("validate", "w.yaml")
    assert result.exit_code == 2
    assert result.stderr.startswith("w.yaml:")
    assert WHERE_SERVICES not in result.stderr, result.stderr
    assert result.stderr.splitlines()[-1] == "1 problem in 1 file"


@pytest.mark.parametrize("command", ["validate", "submit"])
def test_a_service_not_defined_with_no_services_gets_the_hint(here, command) -> None:
    (here / "w.yaml").write_text(
        "api: 4.7.0\nactions:\n  - {id: a, type: execute, service: sleep}\n")
    result = _invoke(command, "w.yaml")
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert "Service `sleep' is not defined." in lines[0]
    assert lines[-2:] == [HINT, "1 problem in 1 file"]
