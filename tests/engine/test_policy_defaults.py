"""Defaults and inheritance of retry policies (extensions 1) in one `steepy run' with real
processes: the engine's default (steepy.yaml, here its variable) under the workflow's
default, and an action that inherits what it does not give from its service."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from steepy.registry import open_registry
from tests.conftest import ROOT

pytestmark = [pytest.mark.process]

FLAKY = str(ROOT / "services" / "bin" / "flaky")
SERVICES = f"""\
- id: plain
  name: flaky without a policy
  description: fails FAIL times, then succeeds
  path: {FLAKY}
  runtime: other
  parameters: &parameters
    - {{id: fail_times, name: f, description: f, type: input, cardinality: 1..1,
       label: --fail-times}}
    - {{id: state, name: s, description: s, type: input, cardinality: 1..1, label: --state}}
    - {{id: output_file, name: o, description: o, type: output, cardinality: 1..1, label: --output}}
- id: patient
  name: flaky with a slow policy
  description: fails FAIL times, then succeeds
  path: {FLAKY}
  runtime: other
  retries: {{maxAttempts: 3, delay: 1h, abortOn: {{exitCodes: [2]}}}}
  parameters: *parameters
"""
WORKFLOW = """\
api: 4.7.0
name: defaults
retries:
  executables: {inherit: true, delay: 20ms}  # maxAttempts: the engine's
actions:
  - id: by-default
    type: execute
    service: plain
    inputs: [{id: fail_times, value: 2}, {id: state, value: %(dir)s/one}]
    outputs: [{id: output_file, var: one}]
  - id: inheriting
    type: execute
    service: patient
    retries: {inherit: true, delay: 10ms}  # maxAttempts and abortOn: the service's
    inputs: [{id: fail_times, value: 2}, {id: state, value: %(dir)s/two}]
    outputs: [{id: output_file, var: two}]
"""


def test_the_defaults_and_an_inherited_key_take_effect(tmp_path) -> None:
    (tmp_path / "services.yaml").write_text(SERVICES)
    (tmp_path / "w.yaml").write_text(WORKFLOW % {"dir": tmp_path})
    env = dict(os.environ, STEEPY_TMPPATH=str(tmp_path / "tmp"),
               STEEPY_OUTPATH=str(tmp_path / "out"),
               STEEPY_LOGS_PROCESSCHAINS_PATH=str(tmp_path / "logs"),
               STEEPY_DB_URL=f"sqlite:///{tmp_path / 'steepy.db'}",
               STEEPY_RETRIES_EXECUTABLES=json.dumps({"maxAttempts": 3, "delay": "1h"}),
               STEEPY_SCHEDULER_LOOKUPINTERVAL="200ms")
    done = subprocess.run([sys.executable, "-m", "steepy.cli", "run", str(tmp_path / "w.yaml"),
                           "--services", str(tmp_path / "services.yaml")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    registry = open_registry(env["STEEPY_DB_URL"])
    (submission,) = registry.views.submission_summaries(size=-1)[0]
    attempts = [a for _, a in registry.views.submission_attempts(submission["id"])]
    by_executable = {}
    for a in attempts:
        by_executable.setdefault(a["executableId"], []).append(a)
    for executable, delay in (("by-default", "20ms"), ("inheriting", "10ms")):
        made = by_executable[executable]
        # three attempts: maxAttempts came from below (the engine's; the service's) ...
        assert [a["outcome"] for a in made] == ["FAILED", "FAILED", "SUCCESS"], executable
        # ... and the delay from above (the workflow's default; the action's), not 1h
        assert made[0]["delayMs"] == made[1]["delayMs"] == int(delay[:-2])
        assert made[0]["delayRule"].startswith(f"exponential {delay}"), made[0]["delayRule"]
