"""GET /search through the in-process app, on SQLite and PostgreSQL: Steep's response shape,
paging headers, counts, time zones and Steep's 400s."""

from __future__ import annotations

import warnings

import pytest

with warnings.catch_warnings():  # Starlette would like httpx2; httpx works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from steepy.http import ApiContext, create_app
from steepy.registry import open_registry
from tests.registry.test_search import fill_known


@pytest.fixture
def api(database_url, tmp_path):
    ctx = ApiContext(fill_known(open_registry(database_url)), log_dir=tmp_path / "logs")
    with TestClient(create_app(ctx), raise_server_exceptions=False) as client:
        yield client


def _ids(response) -> list[str]:
    assert response.status_code == 200, response.text
    return [r["id"] for r in response.json()["results"]]


def test_results_in_steeps_shape(api) -> None:
    response = api.get("/search", params={"q": "filename highmemory", "size": "2"})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert (response.headers["x-page-size"], response.headers["x-page-offset"],
            response.headers["x-page-total"]) == ("2", "0", "5")
    body = response.json()
    assert body["counts"] == {"workflow": 3, "processChain": 2, "total": 5}
    assert body["results"][0] == {
        "id": "w1", "type": "workflow", "requiredCapabilities": ["highmemory"],
        "status": "SUCCESS", "name": "Elvis filename",
        "startTime": "2022-05-20T10:00:00Z", "endTime": "2022-05-20T11:00:00Z",
        "matches": [
            {"locator": "name", "fragment": "Elvis filename",
             "termMatches": [{"term": "filename", "indices": [6]}]},
            {"locator": "requiredCapabilities", "fragment": "highmemory",
             "termMatches": [{"term": "highmemory", "indices": [0]}]},
            {"locator": "source", "fragment": "actions: [filename, highmemory]",
             "termMatches": [{"term": "filename", "indices": [10]},
                             {"term": "highmemory", "indices": [20]}]},
        ]}
    assert body["results"][1]["id"] == "w3"


def test_chains_and_date_matches(api) -> None:
    body = api.get("/search", params={"q": "error:127 end:2022-05-21 is:processchain",
                                      "timeZone": "UTC"}).json()
    # counts are of every type (the UI's tabs), and filters without terms each count (Steep)
    assert body["counts"] == {"workflow": 1, "processChain": 1, "total": 2}
    [chain] = body["results"]
    assert chain == {
        "id": "c2", "type": "processChain", "requiredCapabilities": ["gpu", "highmemory"],
        "status": "ERROR", "startTime": "2022-05-21T09:10:00Z", "endTime": "2022-05-21T09:11:00Z",
        "matches": [
            {"locator": "errorMessage", "fragment": "exit code 127",
             "termMatches": [{"term": "127", "indices": [10]}]},
            {"locator": "endTime", "fragment": "2022-05-21T09:11:00Z",
             "termMatches": [{"term": "2022-05-21"}]},
        ]}


def test_time_zones(api) -> None:
    query = {"q": "start:2022-05-22 is:workflow"}
    assert _ids(api.get("/search", params={**query, "timeZone": "Europe/Berlin"})) == ["w3"]
    assert _ids(api.get("/search", params={**query, "timeZone": "America/New_York"})) == []
    assert _ids(api.get("/search", params={**query, "timeZone": "-04:00"})) == []
    assert _ids(api.get("/search", params={**query, "timeZone": "UTC+2"})) == ["w3"]


def test_paging_and_counts(api) -> None:
    assert _ids(api.get("/search?q=filename&size=1&offset=1")) == ["w2"]
    assert _ids(api.get("/search?q=filename&size=-1&offset=-3")) == ["w3", "w2", "w1"]
    # like Steep, a size or offset that is no number is the default
    assert _ids(api.get("/search?q=filename&size=x&offset=1.5")) == ["w3", "w2", "w1"]
    response = api.get("/search?q=filename&count=NONE")
    assert "counts" not in response.json() and "x-page-total" not in response.headers
    assert api.get("/search?q=filename&count=exact").json()["counts"]["total"] == 3


def test_an_empty_query_finds_nothing(api) -> None:
    for url in ("/search", "/search?q=", "/search?q=%20%C2%A0"):
        response = api.get(url)
        assert response.json() == {"counts": {"workflow": 0, "processChain": 0, "total": 0},
                                   "results": []}


@pytest.mark.parametrize(("params", "message"), [
    ({"count": "all"}, "Parameter `count' must be one of `none', `estimate', or `exact'"),
    ({"timeZone": "Mars/Olympus"}, "Unknown timezone"),
    ({"timeZone": "+25:00"}, "Invalid timezone"),
    ({"timeZone": "%%"}, "Invalid timezone"),
])
def test_bad_parameters_are_400_with_steeps_message(api, params, message) -> None:
    response = api.get("/search", params={"q": "filename", **params})
    assert response.status_code == 400
    assert response.text == message  # exactly Steep's body, without a newline


@pytest.mark.parametrize("query", ["9999-12-31", "start:<0001-01-01", "end:>=9999-12-31T23:59",
                                   "start:0001-01-01..9999-12-31"])
def test_dates_at_the_ends_of_the_calendar_are_no_server_error(api, query) -> None:
    for zone in ("Pacific/Kiritimati", "Etc/GMT+12"):  # +14 h and -12 h push past year 1/9999
        found = api.get("/search", params={"q": query, "timeZone": zone})
        assert found.status_code == 200, (query, zone, found.text)
    assert _ids(api.get("/search", params={"q": "start:0001-01-01..9999-12-31 is:workflow",
                                           "size": -1}))  # every submission with a start
