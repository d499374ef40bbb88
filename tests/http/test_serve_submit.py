"""`steepy serve --submit WORKFLOW` (what `make run` does): the workflow is checked before the
server starts, stored once it listens, and runs; a bad one stops everything with exit 2."""

from __future__ import annotations

from click.testing import CliRunner

from steepy.cli import main
from tests.conftest import ROOT
from tests.http.conftest import Server
import pytest


@pytest.mark.process
def test_serve_submits_the_given_workflow_and_runs_it(tmp_path) -> None:
    server = Server(tmp_path, "--agents", "1", "--submit", "workflows/linear.yaml")
    try:
        listed = server.http.get("/workflows").json()
        assert [s["name"] for s in listed] == ["Linear chain (cp, then sort)"]
        assert server.wait(listed[0]["id"])["status"] == "SUCCESS"
    finally:
        assert server.stop() == 0
    assert any(f"/workflows/{listed[0]['id']}" in line for line in server.output)


def test_serve_with_a_bad_workflow_stores_nothing_and_exits_2(tmp_path, monkeypatch) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("api: 4.7.0\nactions:\n  - type: execute\n    service: no-such-service\n")
    db = tmp_path / "steepy.db"
    monkeypatch.chdir(ROOT)
    done = CliRunner().invoke(main, ["serve", "--port", "0", "--db", f"sqlite:///{db}",
                                     "--submit", str(bad)], catch_exceptions=False)
    assert done.exit_code == 2, done.stderr
    assert f"{bad}:4:" in done.stderr and "no-such-service" in done.stderr
    assert "Traceback" not in done.stderr and "serving on" not in done.stderr
    assert not db.exists()
