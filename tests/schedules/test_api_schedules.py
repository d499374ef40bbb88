"""/schedules on a real `steepy serve` (whose engine fires them), and the schedule commands
through it (`--server`): add, list, pause, resume, remove; bad input is every problem at
once, located, and nothing is stored."""

from __future__ import annotations

import json
import time
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from steepy.cli import main
from steepy.registry import open_registry
from tests.conftest import ROOT
from tests.http.conftest import Server
from tests.schedules.processes import NAP, NAP_VARS, cli, env, wait_for

BAD = "api: 4.7.0\nactions:\n  - type: execute\n    service: nope\n"


@pytest.fixture
def server(tmp_path: Path):
    running = Server(tmp_path, "--agents", "1")
    yield running
    assert running.stop() == 0


def _fired(server: Server, schedule_id: str) -> list[dict]:
    found = server.http.get(f"/schedules/{schedule_id}").json()
    return [f for f in found["firings"] if f["outcome"] == "fired"]


def _newest_fired(server: Server, schedule_id: str) -> datetime:
    return max(datetime.fromisoformat(f["dueTime"]) for f in _fired(server, schedule_id))


def test_schedules_over_http_and_the_cli_with_a_server(server: Server, tmp_path: Path) -> None:
    http = server.http
    bad = http.post("/schedules", json={"workflow": BAD, "every": "500ms", "timezone": "Mars"},
                    headers={"Accept": "application/json"})
    assert bad.status_code == 400
    problems = {(p.get("file"), p.get("path"), p.get("line"))
                for p in json.loads(bad.headers["x-steepy-problems"])}
    assert {("<request>", "every", None), ("<request>", "timezone", None)} <= problems
    assert any(file == "<request>" and line == 4 for file, _, line in problems)
    assert http.get("/schedules").json() == []

    added = http.post("/schedules", json={"workflow": NAP, "every": "1s", "name": "tick"})
    assert added.status_code == 201, added.text
    schedule = added.json()
    assert added.headers["location"] == f"/schedules/{schedule['id']}"
    assert (schedule["name"], schedule["every"], schedule["timezone"], schedule["paused"]) == (
        "tick", "1s", "UTC", False)
    fired = wait_for(lambda: len(_fired(server, schedule["id"])) >= 2 and
                     _fired(server, schedule["id"]), 15, "two firings through serve")
    done = server.wait(fired[-1]["submissionId"])
    assert (done["status"], done["name"]) == ("SUCCESS", "tick")

    environment = env(tmp_path, "sqlite:///unused.db", STEEPY_SERVER=server.url)
    assert f"{schedule['id']}  tick: every 1s (UTC)" in cli(environment, "schedule", "list")
    assert "paused" in cli(environment, "schedule", "pause", schedule["id"])
    time.sleep(0.2)
    # the newest firing's due time: the list holds the latest 20 only, so a count stops
    # growing once a slow machine has fired 20 times before the pause
    newest = _newest_fired(server, schedule["id"])
    time.sleep(1.6)  # a due time passes
    assert _newest_fired(server, schedule["id"]) == newest  # paused: nothing fires
    cli(environment, "schedule", "resume", schedule["id"])
    wait_for(lambda: _newest_fired(server, schedule["id"]) > newest, 5, "a firing after resume")
    assert "removed" in cli(environment, "schedule", "remove", schedule["id"])
    assert http.get(f"/schedules/{schedule['id']}").status_code == 404
    assert http.get("/workflows/" + fired[0]["submissionId"]).status_code == 200  # stays
    assert http.delete(f"/schedules/{schedule['id']}").status_code == 404

    workflow = tmp_path / "bad.yaml"
    workflow.write_text(BAD)
    out = cli(environment, "schedule", "add", str(workflow), "--every", "1s", ok=2)
    assert out == "" and http.get("/schedules").json() == []
    assert http.put("/schedules/nope", json={"paused": True}).status_code == 404
    _vars_through_the_server(environment, tmp_path)
    assert http.put(f"/schedules/{schedule['id']}", json={"paused": 1}).status_code == 400


def test_bad_input_at_add_is_located_and_stores_nothing(tmp_path: Path, monkeypatch) -> None:
    db = f"sqlite:///{tmp_path / 'steepy.db'}"
    environment = env(tmp_path, db)
    workflow = tmp_path / "bad.yaml"
    workflow.write_text(BAD)
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("STEEPY_SERVER", raising=False)  # as env() leaves it out
    for args, expected in (((str(workflow), "--every", "1s"), f"{workflow}:4:14: "),
                           ((str(workflow), "--cron", "61 * * * *"), "--cron: `61 * * * *'"),
                           ((str(workflow),), "--cron/--every: give either")):
        out = CliRunner().invoke(main, ["schedule", "add", *args], env=environment,
                                 catch_exceptions=False)
        assert out.exit_code == 2 and expected in out.stderr, out.stderr
        assert "Traceback" not in out.stderr
    assert open_registry(db).schedules.list_schedules() == []


def _vars_through_the_server(environment: dict, tmp_path: Path) -> None:
    """`schedule add --var` with --server: the server checks the values, and a wrong one is
    placed where it was given, as without a server."""
    workflow = tmp_path / "nap-vars.yaml"
    workflow.write_text(NAP_VARS)
    add = ["schedule", "add", str(workflow), "--every", "1h"]
    bad = CliRunner().invoke(main, [*add, "--var", "paus=1"], env=environment,
                             catch_exceptions=False)
    assert bad.exit_code == 2 and "--var paus: " in bad.stderr and "`pause'" in bad.stderr, \
        bad.stderr
    out = cli(environment, *add, "--var", "pause=0.1")
    shown = cli(environment, "schedule", "show", out.split()[0])
    assert "  var pause: 0.1\n" in shown, shown


def test_a_field_of_the_wrong_type_is_not_also_said_missing() -> None:
    """`"every": 5' was said wrong and then, as if neither `cron' nor `every' were given,
    missing."""
    from steepy.errors import InputError
    from steepy.http.schedules import _new_schedule

    with pytest.raises(InputError) as wrong:
        _new_schedule({"workflow": "api: 4.7.0\nactions: []\n", "every": 5}, {}, {}, None)
    assert [(p.path, p.message) for p in wrong.value.problems] == [("every", "must be a string")]
