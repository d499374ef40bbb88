"""Error answers of a real `steepy serve` in Steep's words (HttpEndpoint.kt's renderError):
plain text, also for a client that asks for JSON as Steep's web UI does; a bad workflow's
located problems follow the first line and come in `X-Steepy-Problems` too."""

from __future__ import annotations

import json

import pytest

from tests.http.test_logs import NAP

JSON = {"accept": "application/json"}
TEXT = {"accept": "text/plain"}  # a log is text: JSON alone is refused (406) as in Steep


def _said(response, status: int) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return response.text


@pytest.fixture(scope="module")
def silent_chain(server) -> str:
    """A finished chain of one run that printed nothing (it has no log file)."""
    sid = server.submit(NAP)
    server.wait(sid)
    (chain,) = server.http.get("/processchains", params={"submissionId": sid}).json()
    return chain["id"]


@pytest.mark.parametrize("path,status,text", [
    ("/workflows/nosuch", 404, "There is no workflow with ID `nosuch'"),
    ("/processchains/nosuch", 404, "There is no process chain with ID `nosuch'"),
    ("/processchains/nosuch/runs/1", 404, "There is no process chain with ID `nosuch'"),
    ("/processchains/x/runs/one", 400, "Invalid run number `one'"),
    ("/logs/processchains/nosuch", 404, "There is no process chain with ID `nosuch'"),
    ("/workflows?status=DONE", 400, "Invalid status: DONE"),
    ("/processchains?status=FINISHED", 400, "Invalid status: FINISHED"),
    ("/vms?status=SLEEPING", 400, "Invalid status: SLEEPING"),
    ("/services/nosuch", 404, "There is no service with ID `nosuch'"),
    ("/plugins/nosuch", 404, "There is no plugin with name `nosuch'"),
])
def test_errors_are_steeps_plain_text_for_json_clients(server, path, status, text) -> None:
    accept = TEXT if path.startswith("/logs/") else JSON
    assert _said(server.http.get(path, headers=accept), status) == text


def test_runs_and_logs_are_refused_in_steeps_words(server, silent_chain: str) -> None:
    chain, http = silent_chain, server.http
    assert _said(http.get(f"/processchains/{chain}/runs/-1", headers=JSON), 404) == \
        "There is no run -1"
    assert _said(http.get(f"/processchains/{chain}/runs/2"), 404) == "There is no run 2"
    log = f"/logs/processchains/{chain}"
    assert _said(http.get(log, params={"runNumber": 0}, headers=TEXT), 400) == \
        "Run number must be greater than 0"
    assert _said(http.get(log, params={"runNumber": "x"}), 400) == "Invalid run number"
    assert _said(http.get(log, params={"runNumber": 2}), 404) == \
        "Run number out of range. There is only one run for this process chain."
    for params in ({}, {"runNumber": 1}):  # the run printed nothing: no log file
        assert _said(http.get(log, params=params, headers=TEXT), 404).startswith(
            f"Log file of process chain `{chain}' could not be found. Possible reasons: (1) ")


@pytest.mark.parametrize("body,text", [
    (b"", "Missing request body"),
    (b"not json", "Invalid request body: "),
    (b"[]", "Invalid request body: "),
    (b"{}", "Missing properties. At least one of `status' and `priority' required"),
    (b'{"status": 1}', "`status' property must be a string"),
    (b'{"status": "DONE"}', "Invalid `status' property"),
    (b'{"priority": "high"}', "`priority' property must be an integer"),
])
def test_bad_updates_are_refused_in_steeps_words(server, body: bytes, text: str) -> None:
    sid = server.submit(NAP)
    for path in (f"/workflows/{sid}", "/processchains/nosuch"):
        said = _said(server.http.put(path, content=body, headers=JSON), 400)
        assert said.startswith(text), (path, said)


def test_a_bad_workflow_says_steeps_first_line_and_keeps_every_located_problem(server) -> None:
    text = ("api: 4.7.0\nactions:\n  - type: execute\n    service: nope\n"
            "  - type: execute\n    service: sleep\n    inputs: [{id: seconds, value: [1, 2]}]\n")
    said = _said(server.http.post("/workflows", content=text, headers=JSON), 400)
    first, blank, *lines = said.split("\n")
    assert (first, blank) == ("Invalid workflow:", "")
    assert lines[0].startswith("<request>:4:14: actions[0].service: Service `nope' is not")
    problems = json.loads(server.http.post("/workflows", content=text).headers[
        "x-steepy-problems"])
    assert problems[0] == {"message": problems[0]["message"], "path": "actions[0].service",
                           "file": "<request>", "line": 4, "column": 14}
    assert len(problems) == len(lines) >= 2
