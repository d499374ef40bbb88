"""`http.allowRoutes` on a real `steepy serve`: as in Steep, only the routes whose declared
path (Steep's spelling) the expression matches as a whole are served; the rest are 404."""

from __future__ import annotations

import pytest

from steepy.config import load_config
from steepy.errors import InputError
from steepy.http.allowroutes import steep_path
from tests.http.conftest import Server


@pytest.mark.parametrize("path,spelled", [
    ("/", "/"), ("/services", "/services"), ("/workflows/{id}", "/workflows/:id/?"),
    ("/processchains/{id}/runs", "/processchains/:id/runs/?"),
    ("/processchains/{id}/runs/{runNumber}", "/processchains/:id/runs/:runNumber/?"),
    ("/eventbus", "/eventbus/"), ("/eventbus/{server}/{session}/websocket", "/eventbus/"),
    ("/_next/static/app.js", "/_next/"),
])
def test_routes_are_spelled_as_steep_declares_them(path: str, spelled: str) -> None:
    assert steep_path(path) == spelled


@pytest.mark.process
def test_only_the_allowed_routes_are_served(tmp_path) -> None:
    # Steep's own test (HttpEndpointTest.allowSubsetOfRoutes) allows `/|/services`
    server = Server(tmp_path, "--no-agents", env={"STEEPY_HTTP_ALLOWROUTES": "/|/services"})
    try:
        http = server.http
        assert http.get("/").json()["version"]
        assert http.get("/services").status_code == 200
        assert isinstance(http.get("/services").json(), list)
        for path in ("/plugins", "/services/sleep", "/workflows", "/health", "/metrics",
                     "/eventbus/info", "/new/workflow"):
            refused = http.get(path, headers={"accept": "application/json"})
            assert (refused.status_code, refused.text) == (404, "Not Found"), path
        assert http.post("/workflows", content=b"api: 4.7.0\nactions: []\n").status_code == 404
    finally:
        assert server.stop() == 0


@pytest.mark.process
def test_an_expression_for_routes_with_parameters_serves_them(tmp_path) -> None:
    env = {"STEEPY_HTTP_BASEPATH": "/steepy", "STEEPY_HTTP_ALLOWROUTES": "/workflows(/:id/\\?)?"}
    server = Server(tmp_path, "--no-agents", env=env)
    try:
        http = server.http
        assert http.get("/workflows").json() == []
        missing = http.get("/workflows/nosuch")
        assert (missing.status_code, missing.text) == (404, "There is no workflow with ID `nosuch'")
        assert http.get("/processchains").status_code == 404
    finally:
        assert server.stop() == 0


def test_an_expression_that_is_not_one_is_a_located_error(tmp_path) -> None:
    with pytest.raises(InputError) as info:
        load_config(tmp_path, {"STEEPY_HTTP_ALLOWROUTES": "/workflows(["})
    assert "http.allowRoutes" in str(info.value)
    assert "is not a regular expression" in str(info.value)
