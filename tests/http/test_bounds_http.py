"""A workflow whose priority or durations the database or the clock cannot hold is a 400 with
its place, on POST /workflows and POST /schedules, and nothing is stored (never a 500)."""

from __future__ import annotations

import warnings

import pytest

with warnings.catch_warnings():  # Starlette would like httpx2; httpx works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from steepy.documents.loading import read_services
from steepy.http import ApiContext, create_app
from steepy.registry import open_registry
from tests.conftest import ROOT

SERVICES = read_services(str(ROOT / "services"))
PRIORITY = "api: 4.7.0\npriority: 99999999999999999999999\nactions: []\n"
DELAY = "api: 4.7.0\nretries: {processChains: {maxAttempts: 5, delay: 3000000d}}\nactions: []\n"


@pytest.fixture
def api(tmp_path) -> TestClient:
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    ctx = ApiContext(registry, SERVICES, {}, log_dir=tmp_path / "logs")
    with TestClient(create_app(ctx), raise_server_exceptions=False) as client:
        yield client


@pytest.mark.parametrize("text, place", [
    (PRIORITY, "<request>:2:11: priority: 99999999999999999999999 is too large; the maximum "
               "is 2147483647"),
    (DELAY, "<request>:2:50: retries.processChains.delay: `3000000d' is longer than the "
            "longest duration steepy accepts"),
])
def test_post_workflows_refuses_what_cannot_be_stored_or_timed(api, text, place) -> None:
    response = api.post("/workflows", content=text)
    assert response.status_code == 400 and place in response.text
    assert api.get("/workflows").json() == []


@pytest.mark.parametrize("text", [PRIORITY, DELAY])
def test_post_schedules_refuses_them_too(api, text) -> None:
    response = api.post("/schedules", json={"workflow": text, "every": "1h"})
    assert response.status_code == 400, response.text
    assert api.get("/schedules").json() == []


def test_post_schedules_refuses_an_interval_beyond_the_longest_duration(api) -> None:
    response = api.post("/schedules", json={"workflow": "api: 4.7.0\nactions: []\n",
                                            "every": "3000000d"})
    assert response.status_code == 400 and "3650d" in response.text
