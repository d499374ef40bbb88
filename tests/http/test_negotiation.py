"""Steep's content negotiation (reference section 8): a GET route answers 406 when the
client's Accept takes none of the types it produces, as Vert.x's `produces` does."""

from __future__ import annotations

import warnings

import pytest

with warnings.catch_warnings():  # Starlette would like httpx2; httpx works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from steepy.http import ApiContext, create_app
from steepy.http.negotiation import produced
from steepy.registry import open_registry
from steepy.ui.negotiation import accepts

BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


@pytest.fixture
def client(tmp_path) -> TestClient:
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    ctx = ApiContext(registry, {}, {}, log_dir=tmp_path / "logs", base_path="/steep")
    with TestClient(create_app(ctx), raise_server_exceptions=False) as c:
        yield c


def test_a_type_is_taken_by_its_name_its_wildcards_or_no_accept_at_all() -> None:
    assert accepts("", "application/json") and accepts("*/*", "text/plain")
    assert accepts("text/*", "text/html") and accepts("application/*", "application/json")
    assert accepts("image/png, application/json;q=0.1", "application/json")
    assert not accepts("image/png", "application/json")
    assert not accepts("application/json;q=0", "application/json")
    assert not accepts("text/*", "application/json")


def test_the_routes_steep_negotiates() -> None:
    both = ("application/json", "text/html")
    assert produced("/workflows") == produced("/workflows/abc/") == both
    assert produced("/") == produced("") == both
    assert produced("/health") == ("application/json",)
    assert produced("/logs/processchains/c1") == ("text/plain", "text/html")
    assert produced("/workflows/abc/events") is None and produced("/new/workflow") is None


def test_a_client_that_takes_neither_json_nor_html_gets_406(client) -> None:
    for path in ("/steep/workflows", "/steep/workflows/none", "/steep/processchains",
                 "/steep/", "/steep/health"):
        refused = client.get(path, headers={"Accept": "image/png"})
        assert refused.status_code == 406, path
        assert refused.text == "Not Acceptable"
    assert client.get("/steep/health", headers={"Accept": "text/html"}).status_code == 406
    assert client.get("/steep/logs/processchains/c1",
                      headers={"Accept": "application/json"}).status_code == 406


def test_json_a_browser_wildcards_or_no_accept_are_taken(client) -> None:
    for accept in ("application/json", "*/*", "application/*", "image/png, */*;q=0.1"):
        answer = client.get("/steep/workflows", headers={"Accept": accept})
        assert answer.status_code == 200 and answer.json() == [], accept
    assert client.get("/steep/workflows", headers={"Accept": ""}).status_code == 200
    page = client.get("/steep/workflows", headers={"Accept": BROWSER})
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert client.get("/steep/workflows/none", headers={"Accept": "text/*"}).status_code == 404
    # steepy's own routes negotiate nothing; neither does a route Steep does not have
    assert client.get("/steep/schedules", headers={"Accept": "image/png"}).status_code == 200
    assert client.get("/steep/nowhere", headers={"Accept": "image/png"}).status_code == 404
    # a log is text: a client that takes text gets it (here: no log yet)
    assert client.get("/steep/logs/processchains/c1",
                      headers={"Accept": "text/plain"}).status_code == 404
