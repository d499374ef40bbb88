"""Token authentication, and the refusal to listen beyond loopback without a token."""

from __future__ import annotations

import os

import httpx
import pytest
from click.testing import CliRunner

from steepy.cli import main
from steepy.config import parse_size
from steepy.http.server import is_loopback
from tests.conftest import ROOT
from tests.engine.workflows import SLEEPY
from tests.http.conftest import Server


@pytest.fixture(scope="module")
def guarded(tmp_path_factory) -> Server:
    running = Server(tmp_path_factory.mktemp("guarded"), "--no-agents", token="s3cret")
    yield running
    assert running.stop() == 0


@pytest.mark.process
def test_with_a_token_every_request_but_health_needs_it(guarded) -> None:
    anonymous = httpx.Client(base_url=guarded.url)
    assert anonymous.get("/health").status_code == 200
    for method, path in (("GET", "/"), ("GET", "/workflows"), ("POST", "/workflows"),
                         ("GET", "/metrics"), ("GET", "/openapi.json"), ("GET", "/docs"),
                         ("PUT", "/workflows/x"), ("GET", "/logs/processchains/x")):
        response = anonymous.request(method, path)
        assert response.status_code == 401, path
        assert response.headers["www-authenticate"].startswith("Bearer")
    wrong = anonymous.get("/workflows", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and "Invalid bearer token" in wrong.text
    basic = anonymous.get("/workflows", headers={"Authorization": "Basic czNjcmV0"})
    assert basic.status_code == 401
    # with the token: an API-only node stores the submission; nobody runs it here
    sid = guarded.submit(SLEEPY)
    assert guarded.http.get(f"/workflows/{sid}").json()["status"] == "ACCEPTED"
    assert guarded.http.get("/agents").json() == []


def test_without_a_token_nothing_is_asked(server) -> None:
    assert httpx.get(f"{server.url}/workflows").status_code == 200


def test_refuses_other_addresses_without_a_token(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    for key in [k for k in os.environ if k.startswith("STEEPY_")]:
        monkeypatch.delenv(key)  # no token from the environment either
    result = CliRunner().invoke(main, ["serve", "--host", "0.0.0.0", "--port", "0", "--no-agents",
                                       "--db", f"sqlite:///{tmp_path / 'db'}"],
                                catch_exceptions=False)
    assert result.exit_code == 2
    assert "Refusing to listen on 0.0.0.0 without a token" in result.stderr
    assert "STEEPY_HTTP_TOKEN" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("host,loopback", [
    ("127.0.0.1", True), ("localhost", True), ("::1", True), ("127.8.0.1", True),
    ("0.0.0.0", False), ("::", False), ("10.1.2.3", False), ("no-such-host.invalid", False)])
def test_loopback_addresses(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_post_max_size_values() -> None:
    assert parse_size(10485760) == parse_size("10 MiB") == 10 * 1024 * 1024
    assert parse_size("10MB") == 10_000_000 and parse_size("512k") == 512_000
    for bad in ("ten", "0", -1, "1 TB"):
        with pytest.raises(ValueError):
            parse_size(bad)
