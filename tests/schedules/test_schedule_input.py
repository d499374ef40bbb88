"""What `steepy schedule add` and POST /schedules refuse: a crontab line that never fires,
an empty time zone or name, a name over 200 characters, unknown fields and a workflow of the
wrong type; each located (the option, or `<request>' and the field), exit code 2 or HTTP
400, nothing stored. `paused` is a documented field of POST /schedules."""

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
from tests.schedules.processes import NAP

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient


@pytest.mark.parametrize("options,expected", [
    (("--cron", "0 0 31 2 *"), "--cron: `0 0 31 2 *' never fires: no month it names (2) "
                               "has a day 31"),
    (("--cron", "0 3 * * *", "--timezone", ""), "--timezone: is empty; leave it out for UTC"),
    (("--every", "1h", "--name", ""), "--name: is empty; leave it out for the workflow's name"),
    (("--every", "1h", "--name", "n" * 201), "--name: is 201 characters long; at most 200"),
    (("--every", "1h", "--name", "a\nb"), "--name: must be one line"),
    # bytes no UTF-8 has (`--name $'\\xff''): stored, the schedule's write broke (exit 5)
    (("--every", "1h", "--name", "\udcff"), "--name: not valid Unicode: a lone surrogate"),
])
def test_schedule_add_refuses_it_located_and_stores_nothing(tmp_path: Path, monkeypatch,
                                                            options, expected) -> None:
    monkeypatch.chdir(tmp_path)
    db = f"sqlite:///{tmp_path / 'steepy.db'}"
    (tmp_path / "nap.yaml").write_text(NAP)
    out = CliRunner().invoke(main, ["schedule", "add", "nap.yaml", "-s", str(ROOT / "services"),
                                    *options],
                             env={"STEEPY_DB_URL": db, "STEEPY_SERVER": ""},
                             catch_exceptions=False)
    assert out.exit_code == 2 and expected in out.stderr, out.stderr
    assert "Traceback" not in out.stderr
    assert open_registry(db).schedules.list_schedules() == []


@pytest.fixture
def client(tmp_path: Path):
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    ctx = ApiContext(registry, read_services(str(ROOT / "services")),
                     log_dir=tmp_path / "logs", agent_max_age_s=30)
    http = TestClient(create_app(ctx))
    yield http
    http.close()
    registry.engine.dispose()


def _problems(http: TestClient, body: dict) -> list[tuple]:
    # (json.dumps escapes a lone surrogate as JSON does, `\ud800', where httpx's encoder fails)
    response = http.post("/schedules", content=json.dumps(body),
                         headers={"Accept": "application/json",
                                  "Content-Type": "application/json"})
    assert response.status_code == 400, response.text
    return [(p.get("file"), p.get("path"), p["message"])
            for p in json.loads(response.headers["x-steepy-problems"])]


@pytest.mark.parametrize("body,expected", [
    ({"workflow": NAP, "every": "1h", "extra": 1},
     ("<request>", "extra", "is not a field of a schedule; they are workflow, cron, every, "
                            "name, timezone, paused, vars")),
    ({"workflow": 5, "every": "1h"},
     ("<request>", "workflow", "must be the workflow as YAML or JSON text, or as an object")),
    ({"every": "1h"},
     ("<request>", "workflow", "is missing: the workflow as YAML or JSON text, or as an object")),
    ({"workflow": NAP, "cron": "0 3 * * 8"},
     ("<request>", "cron", "`0 3 * * 8' is not a crontab line (day of week: 8 is not between "
                           "0 and 7); five fields: minute hour day-of-month month "
                           "day-of-week, e.g. `0 3 * * 1-5', or a macro such as `@daily'")),
    ({"workflow": NAP, "cron": "0 0 31 2 *"},
     ("<request>", "cron", "`0 0 31 2 *' never fires: no month it names (2) has a day 31")),
    ({"workflow": NAP, "every": "0s"},
     ("<request>", "every", "`0s' is shorter than the shortest interval, 1s")),
    ({"workflow": NAP},
     ("<request>", None, "give either `cron' or `every'; neither was given")),
    ({"workflow": NAP, "every": "1h", "timezone": ""},
     ("<request>", "timezone", "is empty; leave it out for UTC")),
    ({"workflow": NAP, "every": "1h", "name": " "},
     ("<request>", "name", "is empty; leave it out for the workflow's name")),
    ({"workflow": NAP, "every": "1h", "name": "n" * 100_000},
     ("<request>", "name", "is 100000 characters long; at most 200")),
    # a lone surrogate: stored, the row's write broke (500); in the time zone, the answer did
    ({"workflow": NAP, "every": "1h", "name": "\ud800"},
     ("<request>", "name", "not valid Unicode: a lone surrogate \\ud800 cannot be passed to a "
                           "tool")),
    ({"workflow": NAP, "every": "1h", "timezone": "\ud800"},
     ("<request>", "timezone", "not valid Unicode: a lone surrogate \\ud800 cannot be passed "
                               "to a tool")),
])
def test_post_schedules_refuses_it_at_its_field(client: TestClient, body: dict,
                                                 expected: tuple) -> None:
    assert _problems(client, body) == [expected]
    assert client.get("/schedules").json() == []


def test_post_schedules_adds_a_paused_schedule_and_takes_200_characters(client) -> None:
    added = client.post("/schedules", json={"workflow": NAP, "cron": "@daily", "paused": True,
                                            "name": "n" * 200})
    assert added.status_code == 201, added.text
    assert (added.json()["paused"], added.json()["name"], added.json()["cron"]) == (
        True, "n" * 200, "@daily")
    resumed = client.put(f"/schedules/{added.json()['id']}", json={"paused": False}).json()
    assert resumed["paused"] is False and resumed["nextFireTime"].endswith("T00:00:00Z")
