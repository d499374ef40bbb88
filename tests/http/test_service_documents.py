"""A service as Steep's API writes it: `runtimeArgs' and `requiredCapabilities' are there
also when empty (Steep drops only nulls; a client reading `service["requiredCapabilities"]'
failed on steepy's). The reuse keys digest the short form: records of earlier runs stay valid."""

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


@pytest.fixture
def api(tmp_path):
    ctx = ApiContext(open_registry(f"sqlite:///{tmp_path / 'steepy.db'}"), SERVICES,
                     log_dir=tmp_path / "logs")
    with TestClient(create_app(ctx)) as client:
        yield client


def test_empty_lists_are_written_as_steep_writes_them(api) -> None:
    assert not SERVICES["sleep"].runtime_args and not SERVICES["sleep"].required_capabilities
    one = api.get("/services/sleep").json()
    assert (one["runtimeArgs"], one["requiredCapabilities"]) == ([], [])
    every = api.get("/services").json()
    assert all(isinstance(s["runtimeArgs"], list) and isinstance(s["requiredCapabilities"], list)
               for s in every)
    # the document the reuse keys digest is the short one, as before
    assert "runtimeArgs" not in SERVICES["sleep"].to_json()
