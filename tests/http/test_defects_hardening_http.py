"""Hardening through the HTTP API: services whose runtime steepy lacks, include cycles among
the macros, and `steepy status --server'."""

from __future__ import annotations

import warnings

import pytest
from click.testing import CliRunner

with warnings.catch_warnings():  # Starlette would like httpx2; httpx works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from steepy.cli import main
from steepy.http import ApiContext, create_app
from steepy.documents.loading import read_macros, read_services
from steepy.registry import open_registry
from tests.conftest import ROOT
from tests.test_defects_hardening import K8S_RUNTIME_AT, K8S_SERVICES, MACRO, USES_A, WORKFLOW


@pytest.fixture
def api(tmp_path):
    (tmp_path / "services.yaml").write_text(K8S_SERVICES)
    macros = tmp_path / "macros"
    macros.mkdir()
    (macros / "a.yaml").write_text(MACRO.format(id="a", other="b"))
    (macros / "b.yaml").write_text(MACRO.format(id="b", other="a"))
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    ctx = ApiContext(registry, read_services(str(tmp_path / "services.yaml")),
                     read_macros(str(macros)), log_dir=tmp_path / "logs")
    with TestClient(create_app(ctx), raise_server_exceptions=False) as client:
        yield client


def test_a_workflow_executing_a_service_without_runtime_is_400(api, tmp_path) -> None:
    response = api.post("/workflows", content=WORKFLOW.replace("service: cp", "service: kcp"))
    assert response.status_code == 400
    assert (f"{tmp_path / K8S_RUNTIME_AT}: [1].runtime: Service `kcp' has runtime `kubernetes', "
            "which steepy does not support yet (Steep does).") in response.text
    assert api.get("/workflows").json() == []  # nothing stored


def test_macro_cycles_concern_only_workflows_that_include_them(api, tmp_path) -> None:
    assert api.post("/workflows", content=WORKFLOW).status_code == 202
    refused = api.post("/workflows", content=USES_A)
    assert refused.status_code == 400
    assert f"{tmp_path / 'macros' / 'a.yaml'}:8:14: [0].actions[0].macro: Detected include cycle" \
        in refused.text
    assert len(api.get("/workflows").json()) == 1


def test_status_through_a_server_is_show(server, workflow_file, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    sid = server.submit(WORKFLOW)
    server.wait(sid)  # finished: nothing changes between the two commands
    env = {"STEEPY_SERVER": server.url}
    for extra in ([], ["--json"]):
        status = CliRunner().invoke(main, ["status", sid, *extra], env=env, catch_exceptions=False)
        show = CliRunner().invoke(main, ["show", sid, *extra], env=env, catch_exceptions=False)
        assert status.exit_code == 0 and status.stdout == show.stdout and sid in status.stdout
