"""/vms and /setups through a real `steepy serve`: steepy has no cloud manager, so it answers
as Steep does with cloud disabled (Steep's web UI opens its VM pages)."""

from __future__ import annotations


def test_vms_are_an_empty_page_and_no_id_is_found(server) -> None:
    vms = server.http.get("/vms")
    assert vms.status_code == 200 and vms.json() == []
    assert vms.headers["content-type"].startswith("application/json")
    assert (vms.headers["x-page-size"], vms.headers["x-page-offset"],
            vms.headers["x-page-total"]) == ("10", "0", "0")
    paged = server.http.get("/vms", params={"size": 5, "offset": -3, "status": "RUNNING"})
    assert paged.json() == [] and paged.headers["x-page-size"] == "5"
    assert paged.headers["x-page-offset"] == "0"
    assert server.http.get("/vms", params={"status": "SLEEPING"}).status_code == 400
    missing = server.http.get("/vms/abc")
    assert missing.status_code == 404 and "There is no VM with ID `abc'" in missing.text


def test_setups_are_unavailable_as_in_steep_with_cloud_disabled(server) -> None:
    for path in ("/setups", "/setups/default"):
        answer = server.http.get(path, headers={"accept": "application/json"})
        assert answer.status_code == 404
        assert answer.headers["content-type"].startswith("text/plain")
        assert answer.text == "Setups are unavailable because cloud configuration is disabled"
