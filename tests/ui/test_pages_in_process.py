"""Pages read as HTML from the app in this process (no browser, no server): the search page
on `/search`, the status counts of the Workflows page during a search, and "Log out" only for
a browser that is logged in."""

from __future__ import annotations

import re
import warnings

import pytest

with warnings.catch_warnings():  # Starlette would like httpx2; httpx works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from steepy.http import ApiContext, create_app
from steepy.registry import open_registry
from steepy.ui.session import COOKIE
from tests.registry.test_search import fill_known
from tests.ui.test_site import HTML

TOKEN = "s3cret-token"


@pytest.fixture
def app(tmp_path):
    registry = fill_known(open_registry(f"sqlite:///{tmp_path / 'steepy.db'}"))
    ctx = ApiContext(registry, log_dir=tmp_path / "logs")
    with TestClient(create_app(ctx)) as client:
        yield client


def _rows(html: str) -> list[str]:
    return re.findall(r'<tr data-result="([^"]+)">', html)


def _tabs(html: str) -> dict[str, tuple[int, bool]]:
    """Filter label -> (its count, whether it is the current one)."""
    found = re.findall(r'<a href="[^"]*"( aria-current="true")?>([\w ]+) <span class="n">(\d+)</span>',
                       html)
    return {label: (int(n), bool(current)) for current, label, n in found}


# ---------------------------------------------------------------- /search


def test_search_in_a_browser_is_a_page_and_clients_keep_the_json(app) -> None:
    page = app.get("/search", params={"q": "highmemory"}, headers=HTML)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    html = page.text
    assert "<h1>Search</h1>" in html and 'name="q" value="highmemory"' in html
    assert 'href="/ui/static/steepy.css' in html  # the UI's look
    assert _tabs(html) == {"All": (3, True), "Workflows": (1, False),
                           "Process chains": (2, False)}
    assert _rows(html) == ["w1", "c2", "c1"]  # as the API ranks them
    assert '<a href="/workflows/w1">Elvis filename</a>' in html
    assert '<a href="/processchains/c2">c2</a>' in html
    # where the query matched, the word marked (id and name are shown anyway)
    assert "requiredCapabilities: <mark>highmemory</mark>" in html
    assert "source: actions: [filename, <mark>highmemory</mark>]" in html

    api = app.get("/search", params={"q": "highmemory"})
    assert api.headers["content-type"] == "application/json"
    assert [r["id"] for r in api.json()["results"]] == ["w1", "c2", "c1"]


def test_search_page_tabs_paging_and_an_empty_box(app) -> None:
    chains = app.get("/search", params={"q": "highmemory", "type": "processChain"}, headers=HTML)
    assert _rows(chains.text) == ["c2", "c1"]
    assert _tabs(chains.text)["Process chains"] == (2, True)
    assert 'name="type" value="processChain"' in chains.text  # a new search keeps the tab

    first = app.get("/search", params={"q": "highmemory", "size": "2"}, headers=HTML).text
    assert _rows(first) == ["w1", "c2"] and "1–2 of 3" in first
    following = re.search(r'rel="next" href="([^"]+)"', first).group(1).replace("&amp;", "&")
    assert "offset=2" in following and "q=highmemory" in following
    assert _rows(app.get(following, headers=HTML).text) == ["c1"]

    nothing = app.get("/search", params={"q": "zebra"}, headers=HTML).text
    assert _rows(nothing) == [] and "Nothing matches this search." in nothing
    empty = app.get("/search", headers=HTML).text
    assert 'name="q" value=""' in empty and "<code>status:error</code>" in empty
    assert _rows(empty) == []


def test_search_page_dates_are_of_the_browsers_zone(app) -> None:
    query = {"q": "start:2022-05-22 is:workflow"}
    berlin = app.get("/search", params={**query, "timeZone": "Europe/Berlin"}, headers=HTML)
    assert _rows(berlin.text) == ["w3"]
    new_york = app.get("/search", params={**query, "timeZone": "America/New_York"}, headers=HTML)
    assert _rows(new_york.text) == []


# ---------------------------------------------------------------- /workflows during a search


def test_workflow_status_counts_are_those_of_the_search(app) -> None:
    every = _tabs(app.get("/workflows", headers=HTML).text)
    assert every["All"] == (3, True) and every["SUCCESS"][0] == every["ERROR"][0] == 1

    page = app.get("/workflows", params={"q": "elvis"}, headers=HTML).text
    found = _tabs(page)
    assert '<a href="/search?q=elvis">Search process chains too</a>' in page
    assert found["All"] == (1, True) and found["SUCCESS"] == (1, False)
    assert found["ERROR"] == found["RUNNING"] == (0, False)
    # within a status, the counts stay those of the search
    errors = _tabs(app.get("/workflows", params={"q": "filename", "status": "ERROR"},
                           headers=HTML).text)
    assert errors["All"] == (3, False) and errors["ERROR"] == (1, True)
    assert errors["RUNNING"] == errors["SUCCESS"] == (1, False)


# ---------------------------------------------------------------- Log out


def test_log_out_only_for_a_browser_that_is_logged_in(tmp_path) -> None:
    ctx = ApiContext(open_registry(f"sqlite:///{tmp_path / 'steepy.db'}"), token=TOKEN)
    with TestClient(create_app(ctx)) as client:
        login = client.get("/login", headers=HTML)
        assert login.status_code == 200 and "<h1>Log in</h1>" in login.text
        assert "Log out" not in login.text
        failed = client.post("/login", data={"token": "wrong", "next": "/"}, headers=HTML)
        assert failed.status_code == 401 and "Log out" not in failed.text
        # a client sending the token in a header has no session to end
        bearer = client.get("/workflows", headers={**HTML, "authorization": f"Bearer {TOKEN}"})
        assert bearer.status_code == 200 and "Log out" not in bearer.text

        client.cookies.set(COOKIE, TOKEN)
        logged_in = client.get("/workflows", headers=HTML)
        assert logged_in.status_code == 200 and "Log out" in logged_in.text


def test_no_token_no_log_out(app) -> None:
    assert "Log out" not in app.get("/workflows", headers=HTML).text
