"""`http.steepUi`: a build of Steep's web UI served as Steep serves it: pages on Steep's
routes for browsers, the API for JSON clients, static files with the base path put in."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

with warnings.catch_warnings():  # Starlette would like httpx2; httpx works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from steepy.cli import main
from steepy.http import ApiContext, create_app
from steepy.http.steepui import prefers_html
from steepy.registry import open_registry

BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
PNG = b"\x89PNG\r\n\x1a\n/$$MYBASEPATH$$ stays"


def _build(root: Path) -> Path:
    """A tiny stand-in with the layout of Steep's `ui/out/ui`."""
    pages = ["index.html", "workflows/index.html", "workflows/[id].html/index.html",
             "processchains/[id].html/index.html", "new/workflow/index.html",
             "processchains/[id].html/runs/[runNumber].html/index.html",
             "logs/processchains/[id].html/index.html"]
    for page in pages:
        path = root / page
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f'<html>{page} <script src="/$$MYBASEPATH$$/_next/app.js"></script>'
                        f'<a href="/$$MYBASEURL$$/workflows">w</a></html>')
    (root / "_next").mkdir()
    (root / "_next" / "app.js").write_text('fetch("/$$MYBASEURL$$/workflows")')
    (root / "favicons").mkdir()
    (root / "favicons" / "site.webmanifest").write_text('{"icons": [{"src": "/favicons/a.png"}]}')
    (root / "favicons" / "a.png").write_bytes(PNG)
    return root


@pytest.fixture
def ui(tmp_path) -> TestClient:
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    ctx = ApiContext(registry, {}, {}, log_dir=tmp_path / "logs", token="secret",
                     steep_ui=_build(tmp_path / "ui"))
    with TestClient(create_app(ctx), raise_server_exceptions=False) as client:
        yield client


def test_accept_decides_between_page_and_api() -> None:
    assert prefers_html(BROWSER)
    assert not prefers_html("*/*") and not prefers_html("")
    assert not prefers_html("application/json, text/html")
    assert prefers_html("application/json;q=0.5, text/html")
    assert not prefers_html("text/plain")


def test_pages_for_browsers_and_the_api_for_json_clients(ui) -> None:
    page = ui.get("/workflows", headers={"Accept": BROWSER})
    assert page.status_code == 200 and "workflows/index.html" in page.text
    assert '<script src="/_next/app.js">' in page.text and 'href="/workflows"' in page.text
    assert page.headers["cache-control"] == "no-cache, no-store, must-revalidate"
    assert "[id].html" in ui.get("/workflows/abc/", headers={"Accept": BROWSER}).text
    run = ui.get("/processchains/c1/runs/2", headers={"Accept": BROWSER})
    assert "runs/[runNumber].html" in run.text
    assert ui.get("/workflows", headers={"Accept": "application/json"}).status_code == 401
    api = ui.get("/workflows", headers={"Accept": "application/json",
                                        "Authorization": "Bearer secret"})
    assert api.status_code == 200 and api.json() == []
    assert "logs/processchains" in ui.get("/logs/processchains/c1",
                                          headers={"Accept": BROWSER}).text


def test_redirects_as_steep_does(ui) -> None:
    new = ui.get("/new", follow_redirects=False)
    assert new.status_code == 301 and new.headers["location"] == "/new/workflow"
    assert "new/workflow" in ui.get("/new/workflow").text  # a page for any client
    runs = ui.get("/processchains/c1/runs?x=1", headers={"Accept": BROWSER},
                  follow_redirects=False)
    assert runs.status_code == 301 and runs.headers["location"] == "/processchains/c1?x=1"


def test_static_files_with_the_base_path_put_in(ui) -> None:
    script = ui.get("/_next/app.js")
    assert script.text == 'fetch("/workflows")'
    assert script.headers["cache-control"] == "public, max-age=31536000"
    assert ui.get("/favicons/a.png").content == PNG  # images are sent as they are
    assert ui.get("/favicons/site.webmanifest").json() == {"icons": [{"src": "/favicons/a.png"}]}
    assert ui.get("/_next/missing.js").status_code == 404
    assert ui.get("/_next/..%2f..%2fsteepy.db").status_code == 404


def test_serve_refuses_a_folder_that_is_no_build(tmp_path, monkeypatch) -> None:
    (tmp_path / "steepy.yaml").write_text("http:\n  steepUi: nothing-here\n")
    monkeypatch.chdir(tmp_path)
    for key in [k for k in os.environ if k.startswith("STEEPY_")]:
        monkeypatch.delenv(key)  # only the folder's steepy.yaml speaks
    result = CliRunner().invoke(main, ["serve", "--port", "0"], catch_exceptions=False)
    assert result.exit_code == 2, result.stderr
    assert "http.steepUi" in result.stderr and "Traceback" not in result.stderr
