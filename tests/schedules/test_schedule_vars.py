"""Values for a scheduled workflow's variables (`steepy schedule add --var/--vars`, `vars`
in the body of POST /schedules): checked when the schedule is added like `steepy submit`
checks them (a wrong one is exit code 2 or 400, located, and nothing is stored), kept with
the schedule, shown, and carried by every submission it fires."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from steepy.cli import main
from steepy.documents.loading import read_services
from steepy.http import ApiContext, create_app
from steepy.registry import open_registry
from tests.conftest import ROOT
from tests.schedules.processes import NAP_VARS as NAP

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

def _cli(db: str, *args: str) -> object:
    return CliRunner().invoke(main, list(args), env={"STEEPY_DB_URL": db, "STEEPY_SERVER": ""},
                              catch_exceptions=False)


def _pause_of(workflow: dict) -> object:
    return next(v["value"] for v in workflow["vars"] if v["id"] == "pause")


def test_schedule_add_keeps_the_values_and_every_firing_carries_them(tmp_path: Path,
                                                                     monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    db = f"sqlite:///{tmp_path / 'steepy.db'}"
    (tmp_path / "nap.yaml").write_text(NAP)
    (tmp_path / "more.yaml").write_text("pause: 1\n")
    services = str(ROOT / "services")
    out = _cli(db, "schedule", "add", "nap.yaml", "--every", "1h", "-s", services,
               "--vars", "more.yaml", "--var", "pause=2")  # the option after the file wins
    assert out.exit_code == 0, out.output
    schedule_id = out.stdout.split()[0]
    shown = _cli(db, "schedule", "show", schedule_id)
    assert "  var pause: 2\n" in shown.stdout
    assert json.loads(_cli(db, "schedule", "show", schedule_id, "--json").stdout)["vars"] == {
        "pause": 2}

    registry = open_registry(db)
    due = registry.schedules.get_schedule(schedule_id).next_fire_time
    [fired] = registry.schedules.fire_due(60, now=due)
    submission = registry.views.get_submission(fired)
    assert submission.vars == {"pause": 2}
    assert _pause_of(submission.workflow.to_json()) == 2
    assert "  var pause: 2\n" in _cli(db, "show", fired).stdout


def test_a_wrong_value_at_add_is_located_and_stores_nothing(tmp_path: Path,
                                                           monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    db = f"sqlite:///{tmp_path / 'steepy.db'}"
    (tmp_path / "nap.yaml").write_text(NAP)
    for var, expected in (("paus=2", "--var paus: the workflow has no variable `paus' that "
                                     "can be set; did you mean `pause'?"),
                          ("pause=[1", "--var pause:1:3: not valid YAML")):
        out = _cli(db, "schedule", "add", "nap.yaml", "--every", "1h", "-s",
                   str(ROOT / "services"), "--var", var)
        assert out.exit_code == 2 and expected in out.stderr, out.stderr
        assert "Traceback" not in out.stderr
    assert open_registry(db).schedules.list_schedules() == []


@pytest.fixture
def http(database_url, tmp_path):
    registry = open_registry(database_url)
    ctx = ApiContext(registry, read_services(str(ROOT / "services")),
                     log_dir=tmp_path / "logs", agent_max_age_s=30)
    client = TestClient(create_app(ctx))
    yield client, registry
    client.close()
    registry.engine.dispose()


def test_post_schedules_takes_vars_and_says_what_is_wrong_with_them(http) -> None:
    client, registry = http
    problems = {}
    for given in (3, {"paus": 1}, {"pause": [1, 2]}):
        bad = client.post("/schedules", json={"workflow": NAP, "every": "1h", "vars": given},
                          headers={"Accept": "application/json"})
        assert bad.status_code == 400, bad.text
        problems[json.dumps(given)] = [(p.get("file"), p.get("path"), p["message"])
                                       for p in json.loads(bad.headers["x-steepy-problems"])]
    assert problems["3"] == [("<request>", "vars",
                              "must be an object of variable ids and values")]
    [(file, path, message)] = problems['{"paus": 1}']
    assert (file, path) == ("<vars>", "paus") and "did you mean `pause'" in message
    assert [(f, p) for f, p, _ in problems['{"pause": [1, 2]}']] == [("<vars>", "pause")]
    assert registry.schedules.list_schedules() == []

    added = client.post("/schedules", json={"workflow": NAP, "every": "1h",
                                            "vars": {"pause": 3}})
    assert added.status_code == 201, added.text
    assert added.json()["vars"] == {"pause": 3}
    assert client.get(f"/schedules/{added.json()['id']}").json()["vars"] == {"pause": 3}
    stored = registry.schedules.get_schedule(added.json()["id"])
    assert _pause_of(stored.workflow.to_json()) == 3
    plain = client.post("/schedules", json={"workflow": NAP, "every": "1h"}).json()
    assert "vars" not in plain
