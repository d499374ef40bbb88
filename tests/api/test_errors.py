"""What the API raises for a database it cannot use and for plain arguments of the wrong kind:
steepy's own exceptions with the command line's messages, never a driver's, SQLAlchemy's or
a ValueError. Nothing here runs a tool: each call fails before an engine starts."""

from __future__ import annotations

import pytest

import steepy
from steepy.api import DatabaseUnavailable

UNREACHABLE = "postgresql+psycopg://u:pw-secret@127.0.0.1:1/db"


def test_an_unreachable_server_is_database_unavailable_without_its_password(scratch) -> None:
    with pytest.raises(DatabaseUnavailable) as caught:
        steepy.connect(UNREACHABLE).submissions()
    message = str(caught.value)
    assert message.startswith("cannot use the database postgresql+psycopg://u:***@127.0.0.1:1/db: ")
    assert "pw-secret" not in message and isinstance(caught.value, steepy.SteepyError)
    with pytest.raises(DatabaseUnavailable, match="^cannot use the database postgresql"):
        steepy.run("greet.yaml", services="services.yaml", db=UNREACHABLE)


def test_a_file_that_is_no_database(scratch) -> None:
    (scratch / "notadb.db").write_text("hello, not a database\n" * 100)
    expected = (f"^cannot use the database {scratch / 'notadb.db'}: its file is not a SQLite "
                r"database \(file is not a database\)$")
    with steepy.connect("notadb.db") as client:
        with pytest.raises(DatabaseUnavailable, match=expected):
            client.submissions()
        with pytest.raises(DatabaseUnavailable, match=expected):
            client.submission("x")
    with pytest.raises(DatabaseUnavailable, match=expected):
        steepy.run("greet.yaml", services="services.yaml", db="notadb.db")
    assert (scratch / "notadb.db").read_text().startswith("hello, not a database")


@pytest.mark.parametrize("vars, where", [
    (["who"], "<vars>: vars is a dict of variable ids and values, not list"),
    ({1: "x"}, "<vars>: a variable id is a string, not int `1'"),
    ({"who": object()}, "<vars>: who: object is not a value a workflow can use"),
])
def test_vars_of_the_wrong_kind_are_input_errors(scratch, vars, where) -> None:
    with pytest.raises(steepy.InputError) as by_run:
        steepy.run("greet.yaml", services="services.yaml", vars=vars)
    assert str(by_run.value).startswith(where)
    with steepy.connect("db.sqlite", services="services.yaml") as client:
        with pytest.raises(steepy.InputError) as by_submit:
            client.submit("greet.yaml", vars=vars)
    assert str(by_submit.value) == str(by_run.value)
    assert not (scratch / "db.sqlite").exists() and not (scratch / ".steepy").exists()


def test_a_status_there_is_not_is_an_input_error(scratch) -> None:
    with steepy.connect("db.sqlite", services="services.yaml") as client:
        client.submit("greet.yaml")
        with pytest.raises(steepy.InputError, match=(
                "^status: `DONE' is not one of ACCEPTED, RUNNING, CANCELLED, SUCCESS, "
                "PARTIAL_SUCCESS, ERROR$")):
            client.submissions(status="DONE")
        assert len(client.submissions(status="ACCEPTED")) == 1


@pytest.mark.parametrize("agents, message", [
    ("two", "agents: 'two' is not a number of agents"),
    (1.5, "agents: 1.5 is not a number of agents"),
    (True, "agents: True is not a number of agents"),
    (-1, "agents: -1 is not a number of agents: give 1 or more (0 or None: the agent's "
         "instances in steepy.yaml, else one per core)"),
])
def test_agents_must_be_a_number_not_below_zero(scratch, agents, message) -> None:
    with pytest.raises(steepy.InputError) as caught:
        steepy.run("greet.yaml", services="services.yaml", agents=agents)
    assert str(caught.value).startswith(message)
    assert not (scratch / ".steepy").exists()  # nothing stored


def test_a_workflow_of_the_wrong_kind_is_an_input_error(scratch) -> None:
    with pytest.raises(steepy.InputError, match=(
            "^workflow: a workflow is a path, YAML or JSON text or a dict, not int$")):
        steepy.run(42, services="services.yaml")
