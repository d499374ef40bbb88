"""Workflows submitted and followed through a real `steepy serve` (issue 6)."""

from __future__ import annotations

import json
import time

import psutil
import yaml

from tests.conftest import ROOT
from tests.engine.workflows import FAILS_ONCE, SLEEPY


def _sleepers(server) -> list[psutil.Process]:
    return [p for p in psutil.Process(server.proc.pid).children(recursive=True)
            if p.name() == "sleep"]


def _wait_running(server, submission_id: str) -> dict:
    end = time.monotonic() + 20
    while time.monotonic() < end:
        chains = server.http.get("/processchains", params={"submissionId": submission_id}).json()
        if chains and chains[0]["status"] == "RUNNING" and _sleepers(server):
            return chains[0]
        time.sleep(0.05)
    raise AssertionError("the chain did not start")


def test_yaml_submission_runs_to_success(server) -> None:
    text = (ROOT / "workflows" / "linear.yaml").read_text()
    response = server.http.post("/workflows", content=text)
    assert response.status_code == 202
    accepted = response.json()
    assert accepted["status"] == "ACCEPTED" and accepted["source"] == text
    assert accepted["workflow"]["name"] == "Linear chain (cp, then sort)"
    done = server.wait(accepted["id"])
    assert done["status"] == "SUCCESS"
    assert done["succeededProcessChains"] == done["totalProcessChains"] == 1
    assert "results" in done and "errorMessage" not in done
    chains = server.http.get("/processchains", params={"submissionId": accepted["id"]}).json()
    assert [c["status"] for c in chains] == ["SUCCESS"]
    assert "executables" not in chains[0] and chains[0]["submissionId"] == accepted["id"]
    chain = server.http.get(f"/processchains/{chains[0]['id']}").json()
    assert chain["totalRuns"] == 1 and chain["runNumber"] == 1 and chain["results"]
    assert [e["serviceId"] for e in chain["executables"]] == ["cp", "sort"]


def test_json_submission_and_stream_of_its_timeline(server) -> None:
    document = yaml.safe_load((ROOT / "workflows" / "fan-out.yaml").read_text())
    sid = server.submit(json.dumps(document), **{"Content-Type": "application/json"})
    messages, ended = [], None
    with server.http.stream("GET", f"/workflows/{sid}/stream") as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        event = None
        for line in response.iter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                if event == "end":
                    ended = json.loads(line[6:])
                else:
                    messages.append(json.loads(line[6:]))
                event = None
    assert ended == "SUCCESS"  # the stream ends by itself once the submission has finished
    kinds = [m["kind"] for m in messages]
    assert kinds[0] == "submission.status" and messages[-1]["status"] == "SUCCESS"
    assert "chain.started" in kinds and "chain.finished" in kinds
    assert [m["id"] for m in messages] == sorted(m["id"] for m in messages)
    timeline = server.http.get(f"/workflows/{sid}/events").json()
    assert [e["id"] for e in timeline] == [m["id"] for m in messages]
    later = server.http.get(f"/workflows/{sid}/events", params={"after": timeline[-2]["id"]})
    assert later.json() == timeline[-1:]


def test_error_then_retry_to_success(server, tmp_path) -> None:
    sid = server.submit(FAILS_ONCE % (tmp_path / "state"))
    failed = server.wait(sid)
    assert failed["status"] == "ERROR" and failed["errorMessage"] == "All process chains failed"
    (chain,) = server.http.get("/processchains", params={"submissionId": sid}).json()
    assert chain["status"] == "ERROR" and "exit code 1" in chain["errorMessage"]
    response = server.http.post(f"/workflows/{sid}/retry")
    assert response.status_code == 200 and response.json()["status"] == "RUNNING"
    assert server.wait(sid)["status"] == "SUCCESS"
    runs = server.http.get(f"/processchains/{chain['id']}/runs").json()
    assert [r["status"] for r in runs] == ["ERROR", "SUCCESS"]
    first = server.http.get(f"/processchains/{chain['id']}/runs/1").json()
    assert first["status"] == "ERROR" and first["runNumber"] == 1 and first["totalRuns"] == 2
    again = server.http.post(f"/workflows/{sid}/retry")
    assert again.status_code == 409 and "SUCCESS" in again.text
    kinds = [e["kind"] for e in server.http.get(f"/workflows/{sid}/events").json()]
    assert "submission.retried" in kinds


def test_logs_whole_ranges_head_and_download(server, tmp_path) -> None:
    sid = server.submit(FAILS_ONCE % (tmp_path / "state"))
    server.wait(sid)
    (chain,) = server.http.get("/processchains", params={"submissionId": sid}).json()
    path = f"/logs/processchains/{chain['id']}"
    whole = server.http.get(path)
    assert whole.status_code == 200 and whole.headers["accept-ranges"] == "bytes"
    assert whole.headers["content-type"].startswith("text/plain")
    text = whole.content
    assert b"failing on purpose" in text and len(text) > 20
    part = server.http.get(path, headers={"Range": "bytes=5-14"})
    assert part.status_code == 206 and part.content == text[5:15]
    assert part.headers["content-range"] == f"bytes 5-14/{len(text)}"
    tail = server.http.get(path, headers={"Range": "bytes=-7"})
    assert tail.status_code == 206 and tail.content == text[-7:]
    rest = server.http.get(path, headers={"x-range": "bytes=10-"})  # Steep's: 200 (test_logs)
    assert rest.status_code == 200 and rest.content == text[10:]
    for bad in (f"bytes={len(text)}-", "bytes=9-3", "lines=1-2", "bytes=-0"):
        refused = server.http.get(path, headers={"Range": bad})
        assert refused.status_code == 416, bad
        assert refused.headers["content-range"] == f"bytes */{len(text)}"
    head = server.http.head(path)
    assert head.status_code == 200 and head.headers["content-length"] == str(len(text))
    assert head.content == b""
    download = server.http.get(path, params={"forceDownload": "true"})
    assert download.headers["content-disposition"] == f'attachment; filename="{chain["id"]}.log"'
    assert server.http.get(path, params={"runNumber": 1}).content == text
    assert server.http.get(path, params={"runNumber": 2}).status_code == 404
    assert server.http.get(path, params={"runNumber": "x"}).status_code == 400
    assert server.http.get(path, params={"runNumber": 0}).status_code == 400
    assert server.http.get("/logs/processchains/nosuchchain").status_code == 404


def test_cancel_a_running_chain_stops_its_processes(server) -> None:
    sid = server.submit(SLEEPY)
    chain = _wait_running(server, sid)
    sleepers = _sleepers(server)
    response = server.http.put(f"/processchains/{chain['id']}", json={"status": "CANCELLED"})
    assert response.status_code == 200
    assert response.json()["status"] == "CANCELLED" and "executables" not in response.json()
    _gone, alive = psutil.wait_procs(sleepers, timeout=10)
    assert not alive  # the tool's process tree is gone
    done = server.wait(sid)
    assert done["status"] == "CANCELLED" and done["cancelledProcessChains"] == 1


def test_cancel_a_running_submission(server) -> None:
    sid = server.submit(SLEEPY)
    _wait_running(server, sid)
    sleepers = _sleepers(server)
    response = server.http.put(f"/workflows/{sid}", json={"status": "CANCELLED"})
    assert response.status_code == 200 and "workflow" not in response.json()
    _gone, alive = psutil.wait_procs(sleepers, timeout=10)
    assert not alive
    assert server.wait(sid)["status"] == "CANCELLED"
    # cancelling again changes nothing; a finished submission's priority is fixed
    assert server.http.put(f"/workflows/{sid}", json={"status": "CANCELLED"}).status_code == 200
    assert server.http.put(f"/workflows/{sid}", json={"priority": 5}).status_code == 422


def test_paging_headers_and_status_filter(server) -> None:
    for _ in range(3):
        server.submit((ROOT / "workflows" / "linear.yaml").read_text())
    total = int(server.http.get("/workflows").headers["x-page-total"])
    assert total >= 3
    page = server.http.get("/workflows", params={"size": 2, "offset": 1})
    assert page.headers["x-page-size"] == "2" and page.headers["x-page-offset"] == "1"
    assert page.headers["x-page-total"] == str(total) and len(page.json()) == 2
    everything = server.http.get("/workflows", params={"size": -1}).json()
    assert len(everything) == total
    assert [s["id"] for s in everything[1:3]] == [s["id"] for s in page.json()]  # newest first
    assert "workflow" not in everything[0] and "source" not in everything[0]
    negative = server.http.get("/workflows", params={"offset": -5, "size": 1})
    assert negative.headers["x-page-offset"] == "0"
    assert negative.json()[0]["id"] == everything[0]["id"]
    for s in everything[:3]:
        server.wait(s["id"])
    succeeded = server.http.get("/workflows", params={"status": "SUCCESS", "size": -1})
    assert all(s["status"] == "SUCCESS" for s in succeeded.json())
    assert int(succeeded.headers["x-page-total"]) == len(succeeded.json()) >= 3
    chains = server.http.get("/processchains", params={"size": 1, "status": "SUCCESS"})
    assert len(chains.json()) == 1 and int(chains.headers["x-page-total"]) >= 3


def test_agents_services_metrics_health_version(server) -> None:
    agents = server.http.get("/agents").json()
    assert len(agents) == 2 and {"id", "available", "capabilities"} <= set(agents[0])
    assert server.http.get(f"/agents/{agents[0]['id']}").json()["id"] == agents[0]["id"]
    assert server.http.head(f"/agents/{agents[0]['id']}").status_code == 200
    assert server.http.get("/agents/nobody").status_code == 404
    services = server.http.get("/services").json()
    assert "sleep" in {s["id"] for s in services}
    assert server.http.get("/services/sleep").json()["path"] == "sleep"
    assert server.http.get("/services/nosuch").status_code == 404
    health = server.http.get("/health").json()
    assert health["health"] is True and health["agents"]["count"] == 2
    metrics = server.http.get("/metrics")
    assert metrics.headers["content-type"].startswith("text/plain")
    assert 'steep_scheduler_process_chains{status="SUCCESS"}' in metrics.text
    assert "steep_remote_agents 2" in metrics.text
    assert server.http.get("/").json()["version"]
    assert "/workflows/{id}/retry" in server.http.get("/openapi.json").json()["paths"]
    assert server.http.get("/docs").status_code == 200


def test_priority_of_waiting_work(server) -> None:
    sid = server.submit(SLEEPY)
    chain = _wait_running(server, sid)
    response = server.http.put(f"/workflows/{sid}", json={"priority": 7})
    assert response.status_code == 200 and response.json()["priority"] == 7
    assert server.http.get(f"/processchains/{chain['id']}").json()["priority"] == 7
    response = server.http.put(f"/processchains/{chain['id']}", json={"priority": 3})
    assert response.status_code == 200 and response.json()["priority"] == 3
    server.http.put(f"/workflows/{sid}", json={"status": "CANCELLED"})
    server.wait(sid)
    late = server.http.put(f"/processchains/{chain['id']}", json={"priority": 1})
    assert late.status_code == 422
