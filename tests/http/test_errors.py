"""Every 4xx answer of the API, in-process (quick) unless it needs a real server."""

from __future__ import annotations

import json
import warnings

import pytest

with warnings.catch_warnings():  # Starlette would like httpx2; httpx works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from steepy.http import ApiContext, create_app
from steepy.documents.loading import read_macros, read_services
from steepy.registry import open_registry
from tests.conftest import ROOT
from tests.engine.workflows import SLEEPY

SERVICES = read_services(str(ROOT / "services"))
MACROS = read_macros(str(ROOT / "workflows" / "macros"))


@pytest.fixture
def api(tmp_path) -> TestClient:
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    ctx = ApiContext(registry, SERVICES, MACROS, log_dir=tmp_path / "logs", post_max_size=4096)
    with TestClient(create_app(ctx), raise_server_exceptions=False) as client:
        yield client


def test_invalid_workflows_are_400_with_every_problem(api) -> None:
    text = ("api: 4.7.0\nactions:\n  - type: execute\n    service: nope\n"
            "  - type: execute\n    service: sleep\n    inputs: [{id: seconds, value: [1, 2]}]\n")
    response = api.post("/workflows", content=text)
    assert response.status_code == 400 and response.headers["content-type"].startswith("text/plain")
    assert "<request>:4:14: actions[0].service: Service `nope' is not defined" in response.text
    as_json = api.post("/workflows", content=text, headers={"Accept": "application/json"})
    problems = json.loads(as_json.headers["x-steepy-problems"])
    assert as_json.status_code == 400 and as_json.text.startswith("Invalid workflow:\n\n")
    assert problems[0] == {"message": problems[0]["message"], "path": "actions[0].service",
                           "file": "<request>", "line": 4, "column": 14}
    assert len(problems) >= 2
    assert api.get("/workflows").json() == []  # nothing stored


@pytest.mark.parametrize("body,expected", [
    (b"", "the file is empty"),
    (b"{", "not valid JSON"),
    (b"a: [", "not valid YAML"),
    (b"\xff\xfe", "not UTF-8"),
    (b"- 1\n- 2\n", "must be an object"),
    (b"api: 3.0.0\nactions: []\n", "API version 3.0.0 is older"),
    (b"api: 9.0.0\nactions: []\n", "API version 9.0.0 is newer"),
    (json.dumps({"api": "4.7.0", "actions": [{"type": "include", "macro": "nosuch"}]}).encode(),
     "nosuch"),
])
def test_unreadable_workflows_are_400(api, body: bytes, expected: str) -> None:
    response = api.post("/workflows", content=body)
    assert response.status_code == 400 and expected in response.text


def test_submission_is_stored_accepted(api) -> None:
    response = api.post("/workflows", content=SLEEPY)
    assert response.status_code == 202 and response.headers["location"].endswith(
        response.json()["id"])
    sid = response.json()["id"]
    shown = api.get(f"/workflows/{sid}").json()
    assert shown["status"] == "ACCEPTED" and shown["totalProcessChains"] == 0
    # retrying a submission that has not finished is refused
    refused = api.post(f"/workflows/{sid}/retry")
    assert refused.status_code == 409 and "ACCEPTED" in refused.text
    # cancelling an ACCEPTED submission ends it at once
    cancelled = api.put(f"/workflows/{sid}", json={"status": "CANCELLED"})
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "CANCELLED"
    assert api.put(f"/workflows/{sid}", json={"priority": 1}).status_code == 422


@pytest.mark.parametrize("path", [
    "/workflows/nosuch", "/workflows/nosuch/events", "/workflows/nosuch/stream",
    "/workflows/nosuch/document", "/processchains/nosuch", "/processchains/nosuch/runs",
    "/processchains/nosuch/runs/1", "/processchains/nosuch/document",
    "/logs/processchains/nosuch", "/services/nosuch", "/agents/nosuch", "/nosuch"])
def test_unknown_ids_are_404(api, path: str) -> None:
    response = api.get(path)
    assert response.status_code == 404 and "Traceback" not in response.text


@pytest.mark.parametrize("method,path,body", [
    ("PUT", "/workflows/nosuch", {"status": "CANCELLED"}),
    ("PUT", "/processchains/nosuch", {"priority": 1}),
    ("POST", "/workflows/nosuch/retry", None),
])
def test_changing_unknown_items_is_404(api, method: str, path: str, body) -> None:
    assert api.request(method, path, json=body).status_code == 404


@pytest.mark.parametrize("query", [  # paging parameters fall back (test_steep_answers.py)
    "/workflows?status=DONE", "/workflows?status=running",
    "/processchains?status=FINISHED", "/processchains/x/runs/one",
    "/workflows/x/events?after=-1", "/logs/processchains/x?forceDownload=maybe",
])
def test_invalid_parameters_are_400_not_422(api, query: str) -> None:
    response = api.get(query)
    assert response.status_code == 400, response.text
    assert response.text.startswith("Invalid ")  # Steep's words where Steep has any


@pytest.mark.parametrize("body", [
    b"", b"not json", b"[]", b"{}", b'{"status": "DONE"}', b'{"priority": "high"}',
    b'{"priority": 1.5}', b'{"priority": true}', b'{"priority": 99999999999999}',
    b'{"status": null}'])
def test_invalid_updates_are_400(api, body: bytes) -> None:
    sid = api.post("/workflows", content=SLEEPY).json()["id"]
    for path in (f"/workflows/{sid}", "/processchains/nosuch"):
        response = api.put(path, content=body)
        assert response.status_code == 400, (path, body, response.text)


def test_bodies_over_the_limit_are_413(api) -> None:
    big = b"# " + b"x" * 5000 + b"\n" + SLEEPY.encode()
    response = api.post("/workflows", content=big)
    assert response.status_code == 413 and "4096" in response.text
    chunks = (b"x" * 1024 for _ in range(8))  # no Content-Length: counted as it arrives
    assert api.post("/workflows", content=chunks).status_code == 413
    assert api.put("/workflows/x", content=b"{" + b" " * 5000 + b"}").status_code == 413
    assert api.get("/workflows").json() == []


def test_errors_never_show_a_traceback(api, monkeypatch) -> None:
    def broken(*_args, **_kwargs):
        raise RuntimeError("database on fire")

    monkeypatch.setattr(api.app.state.ctx.views, "submission_summaries", broken)
    response = api.get("/workflows")
    assert response.status_code == 500
    assert response.text == "Internal server error"
    monkeypatch.setattr(api.app.state.ctx.views, "count_submissions", broken)
    health = api.get("/health")
    assert health.status_code == 503 and health.json()["health"] is False


def test_error_bodies_are_plain_text_whatever_the_accept_header(api) -> None:
    for accept in ("*/*", "application/json"):  # text/plain alone: 406 (test_negotiation)
        said = api.get("/workflows/nosuch", headers={"Accept": accept})
        assert said.headers["content-type"].startswith("text/plain")
        assert said.text == "There is no workflow with ID `nosuch'"
    # a browser gets the UI's not-found page on /workflows/{id}; a path without a page is
    # still the API's, with its plain-text error
    browser = api.get("/workflows/nosuch/events", headers={"Accept": "text/html,*/*;q=0.8"})
    assert browser.status_code == 404
    assert browser.headers["content-type"].startswith("text/plain")
