"""The API answers as Steep's does (issue 28): a chain without a current run shows no run,
PUT asks for JSON, PUT /workflows/{id} keeps the source, lenient paging, a later run's log
downloads as `<id>.log`, browser redirects, an agent's `stateChangedTime`."""

from __future__ import annotations

import time

import pytest

from tests.conftest import ROOT
from tests.http.conftest import Server

pytestmark = [pytest.mark.process]

RUN_FIELDS = {"agentId", "startTime", "endTime", "errorMessage", "runNumber"}

# one chain that fails its only run and then waits an hour for its chain-level retry
PAUSED_FOR_AN_HOUR = """
api: 4.7.0
name: paused for an hour
retries:
  processChains: {maxAttempts: 2, delay: 1h}
actions:
  - id: fails
    type: execute
    service: flaky
    inputs:
      - {id: fail_times, value: 5}
      - {id: exit_code, value: 3}
    outputs:
      - {id: output_file, var: out}
    retries: {maxAttempts: 1}
"""

BROWSER = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}


def _wait_chain(server: Server, submission_id: str, status: str) -> dict:
    end = time.monotonic() + 20
    while time.monotonic() < end:
        chains = server.http.get("/processchains", params={"submissionId": submission_id}).json()
        if chains and chains[0]["status"] == status:
            return chains[0]
        time.sleep(0.05)
    raise AssertionError(f"the chain did not become {status}")


def test_a_paused_or_cancelled_while_paused_chain_shows_no_run(server) -> None:
    sid = server.submit(PAUSED_FOR_AN_HOUR)
    listed = _wait_chain(server, sid, "PAUSED")
    assert not RUN_FIELDS & set(listed) and "autoResumeAfter" not in listed
    one = server.http.get(f"/processchains/{listed['id']}").json()
    assert one["status"] == "PAUSED" and not RUN_FIELDS & set(one)
    assert one["autoResumeAfter"] and one["totalRuns"] == 1  # a PAUSED chain's, always
    first = server.http.get(f"/processchains/{listed['id']}/runs/1").json()
    assert first["status"] == "ERROR" and first["runNumber"] == 1 and first["agentId"]
    assert first["startTime"] and first["endTime"] and "exit code 3" in first["errorMessage"]

    cancelled = server.http.put(f"/processchains/{listed['id']}", json={"status": "CANCELLED"})
    assert cancelled.status_code == 200
    answer = cancelled.json()
    assert answer["status"] == "CANCELLED" and not RUN_FIELDS & set(answer)
    assert not {"autoResumeAfter", "totalRuns", "executables", "results"} & set(answer)
    one = server.http.get(f"/processchains/{listed['id']}").json()
    assert one["status"] == "CANCELLED" and not RUN_FIELDS & set(one)
    assert "autoResumeAfter" not in one and one["totalRuns"] == 1
    (listed,) = server.http.get("/processchains", params={"submissionId": sid}).json()
    assert listed["status"] == "CANCELLED" and not RUN_FIELDS & set(listed)


def test_a_chain_cancelled_while_running_keeps_its_run(server) -> None:
    sid = server.submit("api: 4.7.0\nactions:\n  - {id: nap, type: execute, service: sleep, "
                        "inputs: [{id: seconds, value: 30}]}\n")
    chain = _wait_chain(server, sid, "RUNNING")
    answer = server.http.put(f"/processchains/{chain['id']}", json={"status": "CANCELLED"})
    assert answer.json()["status"] == "CANCELLED"
    server.wait(sid)
    one = server.http.get(f"/processchains/{chain['id']}").json()
    assert one["status"] == "CANCELLED" and one["runNumber"] == 1
    assert one["agentId"] and one["startTime"] and one["endTime"]


def test_put_asks_for_json_and_changes_nothing_else(server) -> None:
    sid = server.submit(PAUSED_FOR_AN_HOUR)
    chain = _wait_chain(server, sid, "PAUSED")
    for path in (f"/processchains/{chain['id']}", f"/workflows/{sid}"):
        for body in ({"status": "CANCELLED"}, {"priority": 9}):
            refused = server.http.put(path, json=body, headers={"Accept": "text/html"})
            assert refused.status_code == 406, (path, body, refused.text)
    one = server.http.get(f"/processchains/{chain['id']}").json()
    assert one["status"] == "PAUSED" and "priority" not in one
    submission = server.http.get(f"/workflows/{sid}").json()
    assert submission["status"] == "RUNNING" and submission["priority"] == 0
    # a browser's Accept (*/* at the end) and none at all are JSON enough
    assert server.http.put(f"/workflows/{sid}", json={"priority": 2},
                           headers=BROWSER).status_code == 200
    answer = server.http.put(f"/workflows/{sid}", json={"status": "CANCELLED"})
    assert answer.status_code == 200
    # Steep's answer: the submission without its workflow (and without details)
    assert answer.json()["source"] == PAUSED_FOR_AN_HOUR and "workflow" not in answer.json()
    assert answer.json()["status"] == "CANCELLED" and answer.json()["priority"] == 2
    assert "errorMessage" not in answer.json() and "results" not in answer.json()


def test_paging_parameters_that_are_no_numbers_are_the_defaults(server) -> None:
    for path in ("/workflows", "/processchains"):
        for query in ({"size": "abc"}, {"size": "1.5", "offset": "x"},
                      {"size": "99999999999"}, {"size": "", "offset": ""}):
            response = server.http.get(path, params=query)
            assert response.status_code == 200, (path, query, response.text)
            assert response.headers["x-page-size"] == "10", (path, query)
            assert response.headers["x-page-offset"] == "0", (path, query)


def test_each_runs_log_downloads_as_the_chains_id(server) -> None:
    sid = server.submit((ROOT / "workflows" / "process-chain-retries.yaml").read_text())
    assert server.wait(sid)["status"] == "SUCCESS"
    (chain,) = server.http.get("/processchains", params={"submissionId": sid}).json()
    for run in (1, 2, 3):
        download = server.http.get(f"/logs/processchains/{chain['id']}",
                                   params={"runNumber": run, "forceDownload": "true"})
        assert download.status_code == 200
        assert download.headers["content-disposition"] == \
            f'attachment; filename="{chain["id"]}.log"'


def test_browser_redirects_are_301(server) -> None:
    new = server.http.get("/new", headers=BROWSER, follow_redirects=False)
    assert new.status_code == 301 and new.headers["location"] == "/new/workflow"
    runs = server.http.get("/processchains/abc/runs", params={"x": "1"}, headers=BROWSER,
                           follow_redirects=False)
    assert runs.status_code == 301 and runs.headers["location"] == "/processchains/abc?x=1"
    assert server.http.get("/processchains/abc/runs").status_code == 404  # JSON: the API's


def test_an_agents_state_changed_time_follows_busy_and_idle(tmp_path) -> None:
    server = Server(tmp_path, "--agents", "1")
    try:
        (idle,) = server.http.get("/agents").json()
        assert idle["available"] and idle["stateChangedTime"] == idle["startTime"]
        sid = server.submit("api: 4.7.0\nactions:\n  - {id: nap, type: execute, service: "
                            "sleep, inputs: [{id: seconds, value: 1.5}]}\n")
        end = time.monotonic() + 20
        while (busy := server.http.get("/agents").json()[0])["available"]:
            assert time.monotonic() < end, "the agent never went busy"
            time.sleep(0.05)
        assert busy["stateChangedTime"] > idle["stateChangedTime"]
        assert server.wait(sid)["status"] == "SUCCESS"
        while not (again := server.http.get("/agents").json()[0])["available"]:
            assert time.monotonic() < end, "the agent never went idle"
            time.sleep(0.05)
        assert again["stateChangedTime"] > busy["stateChangedTime"]
        time.sleep(0.5)  # more heartbeats: an idle agent's time stays
        assert server.http.get("/agents").json()[0]["stateChangedTime"] == \
            again["stateChangedTime"]
    finally:
        assert server.stop() == 0


def test_the_server_says_it_serves_once_its_agents_are_listed(tmp_path) -> None:
    """`serving on ...' is printed once GET /agents lists the engine's agents (an initializer
    plugin that takes its time ran in between, and a client that trusted the line saw
    none)."""
    module = f"slow_start_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{module}.py").write_text(
        "import asyncio\n\nasync def initialize():\n    await asyncio.sleep(1.5)\n")
    (tmp_path / "more.yaml").write_text(
        f"plugins:\n  - {{name: slow, type: initializer, object: '{module}:initialize'}}\n")
    server = Server(tmp_path, "--agents", "2",
                    env={"STEEPY_OVERRIDECONFIGFILE": str(tmp_path / "more.yaml"),
                         "PYTHONPATH": str(tmp_path)})
    try:
        assert len(server.http.get("/agents").json()) == 2
    finally:
        assert server.stop() == 0
