"""PUT /workflows/{id} and PUT /processchains/{id} read `status` as Steep's HttpEndpoint does:
any status name of the route's kind is accepted, only CANCELLED does something, an unknown
name is 400 before the id is looked up, and null counts as missing."""

from __future__ import annotations

import pytest

from tests.http.test_steep_answers import PAUSED_FOR_AN_HOUR, _wait_chain

pytestmark = [pytest.mark.process]


def test_put_accepts_every_status_name_and_acts_only_on_cancelled(server) -> None:
    http = server.http
    sid = server.submit(PAUSED_FOR_AN_HOUR)
    chain = f"/processchains/{_wait_chain(server, sid, 'PAUSED')['id']}"
    workflow = f"/workflows/{sid}"

    def put(path: str, body: dict, code: int) -> str:
        answer = http.put(path, json=body)
        assert answer.status_code == code, (path, body, answer.text)
        return answer.text if code != 200 else answer.json()

    for name in ("ACCEPTED", "RUNNING", "SUCCESS", "PARTIAL_SUCCESS", "ERROR"):
        assert put(workflow, {"status": name}, 200)["status"] == "RUNNING"
    for name in ("REGISTERED", "RUNNING", "PAUSED", "SUCCESS", "ERROR"):
        assert put(chain, {"status": name}, 200)["status"] == "PAUSED"
    # a name of the other kind, or spelled otherwise, is unknown
    for path, name in ((workflow, "PAUSED"), (chain, "PARTIAL_SUCCESS"), (chain, "cancelled"),
                       ("/processchains/nosuch", "DONE")):
        assert put(path, {"status": name}, 400) == "Invalid `status' property"
    assert put("/processchains/nosuch", {"status": "ERROR"}, 404).startswith("There is no")
    assert put(workflow, {"status": None, "priority": None}, 400).startswith("Missing properties")
    # an ignored status beside a priority: the priority changes, the status stays
    answer = put(chain, {"status": "SUCCESS", "priority": 3}, 200)
    assert (answer["status"], answer["priority"]) == ("PAUSED", 3)
    answer = put(workflow, {"status": None, "priority": 4}, 200)
    assert (answer["status"], answer["priority"]) == ("RUNNING", 4)
    # CANCELLED and a priority: both
    answer = put(workflow, {"status": "CANCELLED", "priority": 1}, 200)
    assert (answer["status"], answer["priority"]) == ("CANCELLED", 1)
    # finished: an ignored status changes nothing, a priority is refused in Steep's words
    assert put(workflow, {"status": "RUNNING"}, 200)["status"] == "CANCELLED"
    assert put(chain, {"status": "REGISTERED"}, 200)["status"] == "CANCELLED"
    assert put(workflow, {"status": "ERROR", "priority": 2}, 422).startswith(
        "Cannot change priority of a finished submission\n")
    assert put(chain, {"priority": 2}, 422).startswith(
        "Cannot change priority of a finished process chain\n")
    assert http.get(workflow).json()["priority"] == 1
