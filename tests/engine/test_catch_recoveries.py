"""The workflow catch's maxRecoveries counts the catch's runs (review finding 3): chain
retries (`retries.processChains') and `steepy retry' run the chain again with its catch, and
the catch runs at most maxRecoveries times in the submission all the same. Real processes:
`steepy run', `steepy retry' and a worker."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from steepy.agent.recovery import USED_UP
from tests.conftest import ROOT

pytestmark = [pytest.mark.process]

SERVICES = """\
- id: sh
  name: sh
  description: runs a script
  path: sh
  runtime: other
  parameters:
    - {id: script, name: s, description: s, type: input, cardinality: 1..1, label: -c}
"""
WORKFLOW = """\
api: 4.7.0
name: catch once
retries:
  processChains: {{maxAttempts: 3, delay: 10ms}}
catch:
  service: sh
  maxRecoveries: 1
  inputs: [{{id: script, value: 'echo c >> {runs}; exit 1'}}]
actions:
  - {{id: a, type: execute, service: sh, inputs: [{{id: script, value: 'exit 3'}}]}}
"""


def test_a_failing_catch_runs_once_across_chain_retries_and_steepy_retry(tmp_path: Path):
    runs = tmp_path / "catchruns"
    (tmp_path / "services.yaml").write_text(SERVICES)
    (tmp_path / "w.yaml").write_text(WORKFLOW.format(runs=runs))
    env = dict(os.environ, STEEPY_TMPPATH=str(tmp_path / "tmp"),
               STEEPY_OUTPATH=str(tmp_path / "out"),
               STEEPY_LOGS_PROCESSCHAINS_PATH=str(tmp_path / "logs"),
               STEEPY_DB_URL=f"sqlite:///{tmp_path / 'steepy.db'}",
               STEEPY_SERVICES=str(tmp_path / "services.yaml"))

    def steepy(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "steepy.cli", *args], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=60)

    ran = steepy("run", str(tmp_path / "w.yaml"), "--json")
    assert ran.returncode != 0, ran.stderr
    document = json.loads(ran.stdout)
    (chain,) = document["processChains"]
    assert chain["status"] == "ERROR" and chain["totalRuns"] == 3  # the chain ran 3 times
    assert runs.read_text() == "c\n"  # its catch once
    assert USED_UP in chain["runs"][-1]["errorMessage"]
    catches = [(r["runNumber"], x["outcome"]) for r in chain["runs"] for x in r["attempts"]
               if x["executableId"] == "a.catch"]
    assert catches == [(1, "FAILED")]  # its claim was stored over by the attempt itself

    assert "RUNNING again" in steepy("retry", document["id"]).stdout
    worked = steepy("worker", "--exit-when-idle", "--agents", "1")
    assert worked.returncode == 0, worked.stderr
    again = json.loads(steepy("show", chain["id"], "--json").stdout)
    assert again["status"] == "ERROR" and again["totalRuns"] > 3  # ran again
    assert runs.read_text() == "c\n"  # and its catch still once
