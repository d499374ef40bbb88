"""Mistakes a new user made in the configuration: a group given a list, a key written twice in
two spellings, a misspelt variable. Each is located like every other problem or warning."""

from __future__ import annotations

from pathlib import Path

import pytest

from steepy.config import load_config
from steepy.config.storage import load_sections
from steepy.errors import InputError


def _where(problem) -> tuple:
    return Path(problem.file).name, problem.line, problem.column, problem.path


@pytest.mark.parametrize("text, where", [
    ("notifications: []\n", ("steepy.yaml", 1, 16, "notifications")),
    ("agent: []\n", ("steepy.yaml", 1, 8, "agent")),
    ("steepy:\n  schedules: []\n", ("steepy.yaml", 2, 14, "schedules")),
])
def test_a_group_given_an_empty_list_is_a_problem(tmp_path, text, where) -> None:
    (tmp_path / "steepy.yaml").write_text(text)
    with pytest.raises(InputError) as caught:
        load_config(tmp_path, environ={})
    [problem] = caught.value.problems
    assert _where(problem) == where
    assert "expected an object with the keys" in problem.message
    assert problem.message.endswith("got a list")


def test_a_group_with_nothing_below_it_means_its_defaults(tmp_path) -> None:
    (tmp_path / "steepy.yaml").write_text("notifications:\nagent: {}\n")
    config = load_config(tmp_path, environ={})
    assert config.notifications.webhooks == [] and config.warnings == []


def test_a_group_read_alone_given_a_list_is_a_problem(tmp_path) -> None:
    (tmp_path / "steepy.yaml").write_text("db: []\n")
    with pytest.raises(InputError) as caught:
        load_sections(("db",), tmp_path, environ={})
    [problem] = caught.value.problems
    assert _where(problem) == ("steepy.yaml", 1, 5, "db")


def test_the_message_names_the_keys_one_level_below(tmp_path) -> None:
    (tmp_path / "steepy.yaml").write_text("notifications: 5\n")
    with pytest.raises(InputError) as caught:
        load_config(tmp_path, environ={})
    [problem] = caught.value.problems
    assert "notifications.email," in problem.message
    assert "notifications.email.host" not in problem.message


@pytest.mark.parametrize("text, first, second", [
    ("db.url: sqlite:///x.db\ndb: {url: sqlite:///y.db}\n", "1:9", (2, 5)),
    ("db.url: sqlite:///x.db\ndb:\n  url: sqlite:///y.db\n", "1:9", (3, 3)),
    ("agent.instances: 2\nsteep:\n  agent:\n    instances: 3\n", "1:18", (4, 16)),
])
def test_a_key_set_twice_is_located_at_its_second_place(tmp_path, text, first, second) -> None:
    (tmp_path / "steepy.yaml").write_text(text)
    with pytest.raises(InputError) as caught:
        load_config(tmp_path, environ={})
    [problem] = caught.value.problems
    assert (problem.line, problem.column) == second
    assert problem.message == f"set a second time (first at {tmp_path / 'steepy.yaml'}:{first})"


def test_a_misspelt_variable_is_a_warning_with_a_suggestion(tmp_path) -> None:
    config = load_config(tmp_path, environ={"STEEPY_AGENT_CAPABILITES": "gpu",
                                            "STEEP_DB_UR": "sqlite:///x.db"})
    assert config.agent.capabilities == []
    found = {w.file: w.message for w in config.warnings}
    assert found == {
        "$STEEPY_AGENT_CAPABILITES": "unknown variable (ignored); did you mean "
                                     "$STEEPY_AGENT_CAPABILITIES (agent.capabilities)?",
        "$STEEP_DB_UR": "unknown variable (ignored); did you mean $STEEP_DB_URL (db.url)?"}


def test_variables_that_are_no_keys_are_not_warned_of(tmp_path) -> None:
    # steepy's own (given to tools, read by the CLI), a runtime's section, Steep's keys that
    # steepy lacks, and a known key
    environ = {"STEEPY_ATTEMPT": "1", "STEEPY_PROCESS_CHAIN_ID": "x", "STEEPY_SERVER": "http://h",
               "STEEPY_FAILED_ACTION": "t", "STEEPY_RUNTIMES_DOCKER_PULLL": "x",
               "STEEP_DB_USERNAME": "u", "STEEPY_AGENT_CAPABILITIES": "gpu", "OTHER_X": "1"}
    config = load_config(tmp_path, environ=environ)
    assert config.agent.capabilities == ["gpu"]
    assert config.warnings == []
