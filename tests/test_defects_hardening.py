"""Hardening: include cycles belong to the macro files, the summary names the services of
included macros, API version messages, services whose runtime steepy lacks, `steepy status',
and YAML alias bombs, as a user meets them on the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from steepy.cli import main
from steepy.documents.validation import api_problem
from tests.conftest import ROOT
from tests.cli.test_cli import GOOD

WORKFLOW = GOOD  # a valid workflow that copies a file with the `cp` service

MACRO = """\
- id: {id}
  name: Macro {id}
  description: Includes {other}
  parameters: []
  actions:
    - id: into_{other}
      type: include
      macro: {other}
"""

USES_A = """\
api: 4.7.0
actions:
  - id: first
    type: include
    macro: a
"""

_COPY = """\
- id: {id}
  name: Copy
  description: Copy a file
  path: {path}
  runtime: {runtime}
  parameters:
    - id: input_file
      name: Input
      description: In
      type: input
      cardinality: 1..1
    - id: output_file
      name: Output
      description: Out
      type: output
      cardinality: 1..1
"""
K8S_SERVICES = (_COPY.format(id="cp", path="cp", runtime="other")
                + _COPY.format(id="kcp", path="example/copy:1", runtime="kubernetes"))
K8S_RUNTIME_AT = "services.yaml:21:12"  # the value `kubernetes' of kcp's `runtime'


def billion_laughs() -> str:
    """Nine levels of ten aliases: a few hundred bytes that stand for 10^9 values."""
    lines = ["api: 4.7.0", "lol0: &lol0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, 10):
        lines.append(f"lol{level}: &lol{level} [{', '.join([f'*lol{level - 1}'] * 10)}]")
    return "\n".join(lines + ["actions: []"]) + "\n"


def _run(args: list[str], cwd: Path, env: dict | None = None):
    old = os.getcwd()
    os.chdir(cwd)  # so that no steepy.yaml or services/ of the project is picked up
    try:
        return CliRunner().invoke(main, args, env=env, catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.fixture
def cycle(tmp_path) -> Path:
    """A folder of two macros that include each other."""
    folder = tmp_path / "macros"
    folder.mkdir()
    (folder / "a.yaml").write_text(MACRO.format(id="a", other="b"))
    (folder / "b.yaml").write_text(MACRO.format(id="b", other="a"))
    return folder


# -- 1. include cycles are problems of the macro files ------------------------------------


def test_a_macro_cycle_does_not_fail_a_workflow_that_uses_neither_macro(tmp_path, cycle) -> None:
    (tmp_path / "w.yaml").write_text(WORKFLOW)
    args = ["w.yaml", "--services", str(ROOT / "services"), "--macros", str(cycle)]
    result = _run(["validate", *args], tmp_path)
    assert result.exit_code == 0, result.output
    db = {"STEEPY_DB_URL": f"sqlite:///{tmp_path / 'steepy.db'}"}
    submitted = _run(["submit", *args], tmp_path, db)
    assert submitted.exit_code == 0, submitted.output
    assert submitted.stdout.startswith("submitted ")


def test_validating_the_macro_files_reports_the_cycle_at_the_include(tmp_path, cycle) -> None:
    result = _run(["validate", str(cycle / "a.yaml"), str(cycle / "b.yaml"), "--macros", str(cycle)],
                  tmp_path)
    assert result.exit_code == 2
    problems = [line for line in result.stderr.splitlines() if "include cycle" in line]
    assert len(problems) == 1, result.stderr  # found from both files, reported once
    # at `macro: b' (line 8, column 14) inside a.yaml, naming the other include too
    assert problems[0].startswith(f"{cycle / 'a.yaml'}:8:14: [0].actions[0].macro: "
                                  "Detected include cycle between macros `a', `b'.")
    assert f"`b' includes `a' ({cycle / 'b.yaml'}:8:14)" in problems[0]


def test_a_workflow_that_includes_a_cyclic_macro_hears_of_it_in_the_macro_file(tmp_path, cycle) -> None:
    (tmp_path / "w.yaml").write_text(USES_A)
    result = _run(["validate", "w.yaml", "--macros", str(cycle)], tmp_path)
    assert result.exit_code == 2
    assert f"{cycle / 'a.yaml'}:8:14: [0].actions[0].macro: Detected include cycle" in result.stderr
    assert "w.yaml:" not in result.stderr


# -- 2. the summary names the services of included macros ---------------------------------


def test_summary_lists_the_services_of_included_macros(tmp_path) -> None:
    result = _run(["validate", str(ROOT / "workflows" / "include.yaml"), "--services",
                   str(ROOT / "services"), "--macros", str(ROOT / "workflows" / "macros")], tmp_path)
    assert result.exit_code == 0, result.output
    assert "services: cp, sleep, sort" in result.output  # `sort' runs inside sort_and_copy


# -- 3. API version messages are sentences ------------------------------------------------


def test_api_version_messages_read_as_sentences() -> None:
    old = api_problem("3.0.0").message
    assert old.startswith("API version 3.0.0 is older than 4.0.0: steepy reads workflows of "
                          "API version 4.0.0 to 4.7.0. Update the workflow")
    new = api_problem("5.1.0").message
    assert new.startswith("API version 5.1.0 is newer than 4.7.0: steepy reads workflows of "
                          "API version 4.0.0 to 4.7.0. Use `api: 4.7.0'")


# -- 4. services whose runtime steepy does not have -----------------------------------------


@pytest.fixture
def k8s(tmp_path) -> Path:
    (tmp_path / "services.yaml").write_text(K8S_SERVICES)
    return tmp_path / "services.yaml"


def test_validate_rejects_a_service_file_with_an_unknown_runtime(tmp_path, k8s) -> None:
    result = _run(["validate", str(k8s)], tmp_path)
    assert result.exit_code == 2
    assert (f"{k8s}:21:12: [1].runtime: Service `kcp' has runtime `kubernetes', which steepy "
            "does not support yet (Steep does). Run it with `docker' or `slurm', or install a "
            "runtime plugin for Kubernetes. Supported runtimes: other, docker, slurm.") \
        in result.stderr


def test_a_workflow_using_such_a_service_is_rejected_and_not_stored(tmp_path, k8s) -> None:
    (tmp_path / "w.yaml").write_text(WORKFLOW.replace("service: cp", "service: kcp"))
    db = {"STEEPY_DB_URL": f"sqlite:///{tmp_path / 'steepy.db'}"}
    for command in ("validate", "submit"):
        result = _run([command, "w.yaml", "--services", str(k8s)], tmp_path, db)
        assert result.exit_code == 2, (command, result.output)
        assert f"{tmp_path / K8S_RUNTIME_AT}: [1].runtime: Service `kcp' has runtime" in result.stderr
    assert not (tmp_path / "steepy.db").exists()  # nothing stored: not even a database


def test_a_workflow_not_using_it_is_fine(tmp_path, k8s) -> None:
    (tmp_path / "w.yaml").write_text(WORKFLOW)
    result = _run(["validate", "w.yaml", "--services", str(k8s)], tmp_path)
    assert result.exit_code == 0, result.output


def test_a_macro_executing_such_a_service_makes_its_workflows_invalid(tmp_path, k8s) -> None:
    (tmp_path / "m.yaml").write_text(textwrap.dedent("""\
        - id: a
          name: A
          description: Copies in a cluster
          parameters: []
          vars: [{id: x, value: in.txt}]
          actions:
            - type: execute
              service: kcp
              inputs: [{id: input_file, var: x}]
              outputs: [{id: output_file, var: y}]
        """))
    (tmp_path / "w.yaml").write_text(USES_A)
    result = _run(["validate", "w.yaml", "--services", str(k8s), "--macros", "m.yaml"], tmp_path)
    assert result.exit_code == 2
    assert f"{k8s}:21:12: [1].runtime: Service `kcp' has runtime `kubernetes'" in result.stderr


# -- 5. steepy status is steepy show --------------------------------------------------------


def test_status_is_show_by_another_name(tmp_path) -> None:
    assert main.get_command(None, "status") is main.get_command(None, "show")
    (tmp_path / "w.yaml").write_text(WORKFLOW)
    db = {"STEEPY_DB_URL": f"sqlite:///{tmp_path / 'steepy.db'}"}
    submitted = _run(["submit", "w.yaml", "--services", str(ROOT / "services")], tmp_path, db)
    sid = submitted.stdout.split()[-1]
    for extra in ([], ["--json"]):
        status = _run(["status", sid, *extra], tmp_path, db)
        show = _run(["show", sid, *extra], tmp_path, db)
        assert status.exit_code == 0 and status.stdout == show.stdout and sid in status.stdout
    assert json.loads(_run(["status", sid, "--json"], tmp_path, db).stdout)["status"] == "ACCEPTED"
    missing = _run(["status", "nosuch"], tmp_path, db)
    assert missing.exit_code == 2 and "No submission or process chain" in missing.stderr
    assert "Usage: main status" in _run(["status", "--help"], tmp_path).stdout


# -- 7. alias bombs --------------------------------------------------------------------------

PEAK = """\
import resource, sys
mode, path = sys.argv[1], sys.argv[2]
text = open(path).read()
if mode == "api":
    import warnings
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient
    from steepy.http import ApiContext, create_app
    from steepy.registry import open_registry
    client = TestClient(create_app(ApiContext(open_registry(sys.argv[3]))))
    client.get("/health")
else:
    from click.testing import CliRunner
    from steepy.cli import main
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if mode == "api":
    response = client.post("/workflows", content=text)
    status, out = response.status_code, response.text
else:
    result = CliRunner().invoke(main, ["validate", path])
    status, out = result.exit_code, result.output
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(status, grown // 1024)
print(out)
"""


@pytest.mark.process  # the peak memory of a process of its own is what is measured
@pytest.mark.parametrize("mode", ["cli", "api"])
def test_billion_laughs_is_refused_before_it_costs_memory(tmp_path, mode) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(billion_laughs())
    args = [sys.executable, "-c", PEAK, mode, str(bomb), f"sqlite:///{tmp_path / 'steepy.db'}"]
    env = dict(os.environ, PYTHONPATH=str(ROOT))  # this checkout's steepy, whatever is installed
    done = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=100)
    first, _, out = done.stdout.partition("\n")
    status, grown_mb = map(int, first.split())
    assert status == (2 if mode == "cli" else 400), done.stdout + done.stderr
    assert grown_mb < 100, f"peak RSS grew by {grown_mb} MB"
    name = str(bomb) if mode == "cli" else "<request>"  # at the alias that crosses the limit
    assert (f"{name}:6:63: the document is too large: it expands to more than 100000 nodes "
            "through YAML aliases (limit 100000)") in out
