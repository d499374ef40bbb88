"""POST /workflows refuses a policy beyond the site's retry limits (steepy.yaml
`retries.limits', extensions 1), as `steepy validate` does: 400, located problems."""

from __future__ import annotations

import json
import warnings

with warnings.catch_warnings():  # Starlette would like httpx2; httpx works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from steepy.config import load_config
from steepy.documents.loading import read_services
from steepy.http import ApiContext, create_app
from steepy.plugins import pluginset
from steepy.registry import open_registry
from tests.conftest import ROOT

WORKFLOW = """\
api: 4.7.0
actions:
  - type: execute
    service: sleep
    inputs: [{id: seconds, value: 0.01}]
    retries: {maxAttempts: 50, delay: 1s}
"""


def test_a_policy_beyond_the_limits_is_400_with_its_place(tmp_path, monkeypatch) -> None:
    (tmp_path / "steepy.yaml").write_text("retries: {limits: {maxAttempts: 1..20}}\n")
    plugins = pluginset.load_plugins(load_config(tmp_path, environ={}))
    monkeypatch.setattr(pluginset, "_active", plugins)  # an API-only server's plugins
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    ctx = ApiContext(registry, read_services(str(ROOT / "services")), {}, log_dir=tmp_path)
    with TestClient(create_app(ctx), raise_server_exceptions=False) as api:
        response = api.post("/workflows", content=WORKFLOW,
                            headers={"Accept": "application/json"})
        assert response.status_code == 400
        assert response.text.startswith("Invalid workflow:\n\n")
        message = "maxAttempts 50 is above this site's limit 20 (steepy.yaml retries.limits)"
        assert json.loads(response.headers["x-steepy-problems"]) == [
            {"message": message, "path": "actions[0].retries.maxAttempts", "file": "<request>",
             "line": 6, "column": 28}]
        assert api.get("/workflows").json() == []  # nothing stored
        fixed = api.post("/workflows", content=WORKFLOW.replace("50", "20"))
        assert fixed.status_code == 202, fixed.text
