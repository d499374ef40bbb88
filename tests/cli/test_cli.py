"""`steepy validate` and `steepy services` as a user runs them."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from steepy.cli import main
from tests.conftest import ROOT

GOOD = """\
api: 4.7.0
name: copy
vars:
  - id: src
    value: in.txt
actions:
  - type: execute
    service: cp
    inputs:
      - id: input_file
        var: src
    outputs:
      - id: output_file
        var: dst
"""


def _run(args: list[str], cwd: Path):
    import os

    old = os.getcwd()
    os.chdir(cwd)  # so that no steepy.yaml or services/ of the project is picked up
    try:
        return CliRunner().invoke(main, args, catch_exceptions=False)
    finally:
        os.chdir(old)


def test_examples_all_validate() -> None:
    result = CliRunner().invoke(main, ["validate", str(ROOT / "workflows"), str(ROOT / "services"),
                                       "--services", str(ROOT / "services"),
                                       "--macros", str(ROOT / "workflows" / "macros")])
    assert result.exit_code == 0, result.output
    assert result.output.count(": valid:") >= 10


def test_valid_workflow_one_line_summary(tmp_path) -> None:
    (tmp_path / "w.yaml").write_text(GOOD)
    result = _run(["validate", str(tmp_path / "w.yaml"), "--services", str(ROOT / "services")], tmp_path)
    assert result.exit_code == 0
    assert "valid: workflow `copy'" in result.output and "services: cp" in result.output


def test_broken_workflow_reports_every_problem_with_location(tmp_path) -> None:
    broken = GOOD.replace("service: cp", "service: cpp").replace("var: src", "var: nowhere")
    (tmp_path / "w.yaml").write_text(broken)
    result = _run(["validate", str(tmp_path / "w.yaml"), "--services", str(ROOT / "services")], tmp_path)
    assert result.exit_code == 2
    assert "w.yaml:8:14: actions[0].service: Service `cpp' is not defined. Did you mean `cp'?" in result.output
    assert "w.yaml:11:14: actions[0].inputs[0].var: Input variable `nowhere' has no value" in result.output
    assert "2 problems in 1 file" in result.output
    assert "Traceback" not in result.output


def test_steepy_yaml_names_the_services(tmp_path) -> None:
    (tmp_path / "w.yaml").write_text(GOOD.replace("service: cp", "service: sleep"))
    (tmp_path / "steepy.yaml").write_text(f"steep:\n  services: {ROOT / 'services'}\n")
    result = _run(["validate", str(tmp_path / "w.yaml")], tmp_path)
    assert result.exit_code == 2  # sleep has no input_file parameter: the services were used
    assert "Service `sleep' has no parameter `input_file'" in result.output


def test_invalid_service_folder_is_reported(tmp_path) -> None:
    (tmp_path / "s.yaml").write_text("- id: x\n  path: cp\n")
    (tmp_path / "w.yaml").write_text(GOOD)
    result = _run(["validate", str(tmp_path / "w.yaml"), "--services", str(tmp_path / "s.yaml")], tmp_path)
    assert result.exit_code == 2
    assert "s.yaml:1:3" in result.output and "`name' is required" in result.output


def test_old_api_version_says_so(tmp_path) -> None:
    (tmp_path / "w.yaml").write_text(GOOD.replace("4.7.0", "3.0.0"))
    result = _run(["validate", str(tmp_path / "w.yaml"), "--services", str(ROOT / "services")], tmp_path)
    assert result.exit_code == 2
    assert "w.yaml:1:6: api: API version 3.0.0 is older than" in result.output


def test_services_lists_them(tmp_path) -> None:
    result = _run(["services", "--services", str(ROOT / "services")], tmp_path)
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0].startswith("id\truntime\tpath")
    assert any(line.startswith("flaky\tother\tservices/bin/flaky") for line in lines)


def test_plan_prints_the_first_step_as_command_lines(tmp_path) -> None:
    (tmp_path / "w.yaml").write_text(GOOD)
    result = _run(["plan", str(tmp_path / "w.yaml"), "--services", str(ROOT / "services")], tmp_path)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "step 1: 1 process chain(s)"
    assert lines[2].startswith("    ") and ": cp in.txt " in lines[2]
    assert lines[2].endswith(".txt") and "/PLAN/" in lines[2]


def test_plan_all_simulates_every_step(tmp_path) -> None:
    result = _run(["plan", str(ROOT / "workflows" / "fan-out.yaml"), "--all", "--json",
                   "--services", str(ROOT / "services")], tmp_path)
    assert result.exit_code == 0, result.output
    import json

    steps = json.loads(result.output)
    assert len(steps) == 3 and len(steps[0]) == 1 and len(steps[-1]) == 1
    assert steps[-1][0]["executables"][0]["serviceId"] == "cat"


def test_plan_refuses_an_invalid_workflow(tmp_path) -> None:
    (tmp_path / "w.yaml").write_text(GOOD.replace("service: cp", "service: nope"))
    result = _run(["plan", str(tmp_path / "w.yaml"), "--services", str(ROOT / "services")], tmp_path)
    assert result.exit_code == 2 and "Service `nope' is not defined" in result.output


@pytest.mark.process  # the installed entry point in a process of its own is the point
def test_python_dash_m_steepy_is_the_command() -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "steepy", "--help"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and "serve" in done.stdout, done.stderr


def test_a_bad_requeue_rule_is_a_located_problem(tmp_path) -> None:
    """Extensions 11: a re-queue rule's regex and duration are checked like retryOn's."""
    bad = GOOD + ("    retries:\n      maxAttempts: 1\n      requeue:\n"
                  "        output: \"(unclosed\"\n        delay: 3 fortnights\n")
    (tmp_path / "w.yaml").write_text(bad)
    result = _run(["validate", str(tmp_path / "w.yaml"), "--services", str(ROOT / "services")], tmp_path)
    assert result.exit_code == 2, result.output
    assert ("w.yaml:18:17: actions[0].retries.requeue.output: output is not a valid regular "
            "expression") in result.output
    assert "w.yaml:19:16: actions[0].retries.requeue.delay: Unknown duration unit" in result.output
    good = GOOD + "    retries:\n      requeue: {exitCodes: [75], delay: 1s}\n"
    (tmp_path / "w.yaml").write_text(good)
    result = _run(["validate", str(tmp_path / "w.yaml"), "--services", str(ROOT / "services")], tmp_path)
    assert result.exit_code == 0, result.output


def test_kubernetes_is_a_clear_located_refusal(tmp_path) -> None:
    """Steep has a Kubernetes runtime; steepy says it has none yet, where the service says so."""
    (tmp_path / "services.yaml").write_text(
        "- id: kube\n  name: kube\n  description: in a pod\n  path: busybox\n"
        "  runtime: kubernetes\n  parameters: []\n")
    (tmp_path / "w.yaml").write_text("api: 4.7.0\nactions:\n  - {type: execute, service: kube}\n")
    result = _run(["validate", str(tmp_path / "w.yaml"), "--services",
                   str(tmp_path / "services.yaml")], tmp_path)
    assert result.exit_code == 2, result.output
    assert ("services.yaml:5:12: [0].runtime: Service `kube' has runtime `kubernetes', which steepy "
            "does not support yet (Steep does).") in result.output
    assert "Traceback" not in result.output
