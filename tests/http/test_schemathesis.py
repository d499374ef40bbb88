"""Schemathesis against /openapi.json: generated requests for every operation, none of
which may get a 5xx (bounded, in-process, offline)."""

from __future__ import annotations

import atexit
import shutil
import tempfile
import warnings
from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, settings

from steepy.http import ApiContext, create_app
from steepy.documents.loading import read_services
from steepy.registry import open_registry
from tests.conftest import ROOT

# made when the module is collected (the schema is read then), removed when pytest ends
_directory = Path(tempfile.mkdtemp(prefix="steepy-schemathesis-"))
atexit.register(shutil.rmtree, _directory, ignore_errors=True)
_context = ApiContext(open_registry(f"sqlite:///{_directory / 'steepy.db'}"),
                      read_services(str(ROOT / "services")), log_dir=_directory / "logs",
                      cancel_wait_s=0.0)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(_context))
# a live stream of an unknown submission ends at once (404), so it may be tested too; the
# global feed never ends (tests/http/test_feed.py tests it against a real server)
schema = schema.exclude(path="/events")


@schema.parametrize()
@settings(max_examples=15, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_no_server_errors(case) -> None:
    response = case.call()
    assert response.status_code < 500, (case.method, case.formatted_path, response.text)
