"""The API's read models and updates on each database steepy supports (SQLite, PostgreSQL),
after an in-process engine has run a workflow whose chain needs three runs."""

from __future__ import annotations

import asyncio
import warnings

import pytest

from steepy.agent import AgentConfig
from steepy.engine.engine import Engine, EngineSettings
from steepy.http import ApiContext, create_app
from steepy.documents.loading import read_services
from steepy.registry import open_registry
from tests.conftest import ROOT
from tests.engine.workflows import SLEEPY

pytestmark = [pytest.mark.process]

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

SERVICES = read_services(str(ROOT / "services"))


@pytest.fixture
def api(database_url, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    registry = open_registry(database_url)
    settings = EngineSettings(tmp_path=str(tmp_path / "tmp"), out_path=str(tmp_path / "out"),
                              agents=1, sweep_s=0.2, heartbeat_s=0.2, lease_s=30,
                              agent=AgentConfig(kill_grace_period_ms=500,
                                                log_dir=tmp_path / "logs"))
    ctx = ApiContext(registry, SERVICES, log_dir=tmp_path / "logs", agent_max_age_s=30)
    client = TestClient(create_app(ctx))
    text = (ROOT / "workflows" / "process-chain-retries.yaml").read_text()
    sid = client.post("/workflows", content=text).json()["id"]
    engine = Engine(registry, SERVICES, {}, settings)
    asyncio.run(asyncio.wait_for(engine.run(until_submission=sid), 60))
    yield client, sid
    client.close()
    registry.engine.dispose()


def test_views_and_priorities_after_a_run(api) -> None:
    client, sid = api
    (listed,) = client.get("/workflows").json()
    assert listed["id"] == sid and listed["status"] == "SUCCESS" and listed["priority"] == 5
    assert listed["succeededProcessChains"] == listed["totalProcessChains"] == 1
    assert set(listed) & {"workflow", "source", "results", "errorMessage"} == set()
    full = client.get(f"/workflows/{sid}").json()
    assert full["workflow"]["name"] == listed["name"] and list(full["results"]) == ["result"]
    (chain,) = client.get("/processchains", params={"submissionId": sid}).json()
    assert chain["retries"]["maxAttempts"] == 3 and chain["priority"] == 5
    assert "executables" not in chain and "totalRuns" not in chain
    one = client.get(f"/processchains/{chain['id']}").json()
    assert one["totalRuns"] == 3 and one["runNumber"] == 3 and one["status"] == "SUCCESS"
    first = client.get(f"/processchains/{chain['id']}/runs/1").json()
    assert first["status"] == "ERROR" and "exit code 3" in first["errorMessage"]
    assert first["autoResumeAfter"] and "results" not in first
    assert client.get(f"/processchains/{chain['id']}/runs/4").status_code == 404
    metrics = client.get("/metrics").text
    assert 'steep_scheduler_process_chains{status="SUCCESS"} 1' in metrics
    assert 'steepy_process_chain_runs{status="ERROR"} 2' in metrics
    assert 'steepy_submissions{status="SUCCESS"} 1' in metrics
    kinds = [e["kind"] for e in client.get(f"/workflows/{sid}/events").json()]
    assert kinds.count("chain.started") == 3 and kinds[-1] == "submission.status"
    stream = client.get(f"/workflows/{sid}/stream").text  # finished: all events, then end
    assert stream.count("\nid: ") == len(kinds)
    assert stream.rstrip().endswith('event: end\ndata: "SUCCESS"')

    # priorities: of waiting work only
    waiting = client.post("/workflows", content=SLEEPY).json()["id"]
    changed = client.put(f"/workflows/{waiting}", json={"priority": -3})
    assert changed.status_code == 200 and changed.json()["priority"] == -3
    assert client.get("/workflows", params={"size": 1}).json()[0]["priority"] == -3
    assert client.put(f"/workflows/{sid}", json={"priority": 1}).status_code == 422
    (chain,) = client.get("/processchains", params={"submissionId": sid}).json()
    assert client.put(f"/processchains/{chain['id']}", json={"priority": 1}).status_code == 422
    kinds = [e["kind"] for e in client.get(f"/workflows/{waiting}/events").json()]
    assert kinds == ["submission.status", "submission.priority"]
