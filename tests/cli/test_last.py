"""`last' for a submission's id (steepy/cli/manage.py): the newest submission, in every
command that takes an id; none stored is one line and exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from steepy.cli import main
from steepy.cli.manage import _latest_named, open_backend
from steepy.registry import open_registry
from tests.cli.test_search_priority import known  # noqa: F401 - the fixture


def steepy(*args: str, code: int = 0):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result


def _newest(db: str) -> str:
    return steepy("list", "--size", "1", "--db", db).stdout.splitlines()[1].split()[0]


@pytest.mark.parametrize("command", [["show"], ["status"], ["show", "--json"], ["events"]])
def test_last_is_the_newest_submission(known: str, command: list[str]) -> None:  # noqa: F811
    newest = _newest(known)
    assert newest in ("w1", "w2", "w3")
    by_id = steepy(*command, newest, "--db", known).stdout
    assert steepy(*command, "last", "--db", known).stdout == by_id


def test_last_for_a_chain_and_for_a_change(known: str) -> None:  # noqa: F811
    newest = _newest(known)
    # `logs' takes a chain: given the newest submission, it names that submission's chains
    said = steepy("logs", "last", "--db", known, code=2).stderr
    assert said.startswith(f"`{newest}' is a submission, not a process chain")
    assert newest == "w3"  # (the fixture's newest is RUNNING)
    said = steepy("cancel", "last", "--db", known).stdout
    assert said.startswith("submission w3: cancel requested (was RUNNING")
    # a finished chain is no cancel: exit 2, as for a finished submission (it said exit 0)
    refused = steepy("cancel", "c1", "--db", known, code=2).stderr
    assert refused.startswith("Process chain `c1' has already finished (SUCCESS)")


def test_no_submission_yet(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    for key in ("STEEPY_SERVER", "STEEPY_DB_URL", "STEEPY_HTTP_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    db = f"sqlite:///{tmp_path / 'empty.db'}"
    open_registry(db).close()
    said = steepy("show", "last", "--db", db, code=2).stderr
    assert said == "No submission yet: `last' names the newest one.\n"


def test_last_among_several_ids(known: str) -> None:  # noqa: F811
    with open_backend(known, None) as backend:
        named = _latest_named(backend, {"submission_ids": ("w1", "last", "w2"), "size": 3})
    assert named == {"submission_ids": ("w1", "w3", "w2"), "size": 3}
