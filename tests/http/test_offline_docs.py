"""/docs and /redoc work offline: every script, stylesheet and icon they name is served by the
app itself (from an installed package), also behind a proxy that mounts it under a prefix."""

from __future__ import annotations

import re
import warnings

import pytest

with warnings.catch_warnings():  # Starlette would like httpx2; httpx works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from steepy.http import ApiContext, create_app
from steepy.registry import open_registry

ASSET = re.compile(r"""(?:src|href)\s*=\s*["']([^"']+)["']|url:\s*["']([^"']+)["']""")
ABSOLUTE = re.compile(r"""https?://[^\s"'<>)]+""")


@pytest.fixture
def app(tmp_path):
    return create_app(ApiContext(open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")))


def _references(page: str) -> list[str]:
    return [a or b for a, b in ASSET.findall(page)]


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
@pytest.mark.parametrize("root", ["", "/steepy"])
def test_docs_pages_name_only_assets_the_app_serves(app, page: str, root: str) -> None:
    client = TestClient(app, base_url="http://testserver", root_path=root)
    response = client.get(root + page)
    assert response.status_code == 200 and "text/html" in response.headers["content-type"]
    external = [u for u in ABSOLUTE.findall(response.text) if not u.startswith("http://testserver")]
    assert external == []
    loaded = _references(response.text)
    assert loaded and not [u for u in loaded if "//" in u], loaded
    scripts = [u for u in loaded if u.endswith((".js", ".css", ".png", ".json"))]
    assert any(u.endswith(".js") for u in scripts)
    for url in scripts:
        assert url.startswith(root + "/"), url
        answer = client.get(url)
        assert answer.status_code == 200 and answer.content, url


def test_the_openapi_document_does_not_list_the_docs_routes(app) -> None:
    paths = TestClient(app).get("/openapi.json").json()["paths"]
    assert not [p for p in paths if p.startswith(("/docs", "/redoc"))]


def test_redocs_script_loads_nothing_from_the_internet(app) -> None:
    """ReDoc's sidebar shows Redocly's logo from their CDN: the served script has no address
    it would load (an empty image instead)."""
    script = TestClient(app).get("/docs/assets/redoc.standalone.js")
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    assert len(script.content) > 500_000  # the whole script
    assert "cdn.redoc.ly" not in script.text
    assert re.findall(r"""src\s*:\s*["']https?://""", script.text) == []
