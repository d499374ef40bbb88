"""A trailing slash is optional on every route, as in Steep (`/workflows/:id/?`): the
request is served, not redirected (307), for the API and the pages, also under a base path."""

from __future__ import annotations

import warnings

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from steepy.http import ApiContext, create_app
from steepy.documents.loading import read_services
from steepy.registry import open_registry
from tests.conftest import ROOT

SERVICES = read_services(str(ROOT / "services"))
WORKFLOW = "api: 4.7.0\nname: slashes\nactions: []\n"


@pytest.fixture(params=["", "/steepy"], ids=["root", "base-path"])
def api(request, tmp_path):
    ctx = ApiContext(open_registry(f"sqlite:///{tmp_path / 'steepy.db'}"), SERVICES,
                     log_dir=tmp_path / "logs", base_path=request.param)
    with TestClient(create_app(ctx), base_url=f"http://testserver{request.param}",
                    follow_redirects=False) as client:
        yield client


def test_a_trailing_slash_is_served_not_redirected(api) -> None:
    posted = api.post("/workflows/", content=WORKFLOW)
    assert posted.status_code == 202, posted.text
    sid = posted.json()["id"]
    changed = api.put(f"/workflows/{sid}/", json={"priority": 2})
    assert changed.status_code == 200, (changed.status_code, changed.headers)
    assert api.get(f"/workflows/{sid}").json()["priority"] == 2
    for path in (f"/workflows/{sid}/", "/workflows/", "/services/", "/services/sleep/",
                 "/processchains/", "/agents/", "/plugins/", "/health/"):
        answer = api.get(path, headers={"accept": "application/json"})
        assert answer.status_code == 200, (path, answer.status_code, answer.headers)
    assert api.get("/processchains/nosuch/runs/").status_code == 404  # (the chain's, not 307)
    # the pages too
    page = api.get("/workflows/", headers={"accept": "text/html"})
    assert page.status_code == 200 and "<html" in page.text.lower()


def test_the_root_keeps_its_slash(api) -> None:
    assert api.get("/", headers={"accept": "application/json"}).json()["version"]


def test_a_missing_static_file_is_404_not_500(api) -> None:
    answer = api.get("/ui/static/nope.css")
    assert answer.status_code == 404 and answer.text == "Not Found\n"
    assert api.post("/ui/static/steepy.css").status_code == 405
