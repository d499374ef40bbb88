"""A runtime and an output adapter added as a separate installed package with entry points:
steepy lists them, and a workflow whose service has `runtime: tiny' runs through them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT

PYPROJECT = """\
[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "steepy-tinyplug"
version = "0.3.0"

[project.entry-points."steepy.runtimes"]
tinyrun = "tinyplug:TinyRuntime"

[project.entry-points."steepy.outputAdapters"]
countlines = "tinyplug:count_lines"

[tool.setuptools]
py-modules = ["tinyplug"]
"""

MODULE = '''\
"""A runtime `tiny' (its tool gets `runtimes.tiny.marker' as first argument) and an output
adapter for the data type `lines' (the result is the file with its number of lines)."""

from steepy.plugins import Launch
from steepy.runtimes import argument_list


class TinyRuntime:
    supported_runtime = "tiny"

    def command(self, executable, context):
        marker = context.settings.get("marker", "no marker")
        return Launch([executable.path, marker, *argument_list(executable.arguments)])


def count_lines(output, chain):
    path = output.variable.value
    with open(path) as f:
        return [f"{path}#{len(f.readlines())} lines"]


count_lines.supported_data_type = "lines"
'''

SERVICES = """\
- id: tinytool
  name: Tiny tool
  description: writes its arguments into its output, one a line
  path: {tool}
  runtime: tiny
  parameters:
    - id: output
      name: Output
      description: the file
      type: output
      cardinality: 1..1
      dataType: lines
"""

WORKFLOW = """\
api: 4.7.0
actions:
  - type: execute
    service: tinytool
    outputs:
      - id: output
        var: result
        store: true
"""


def _run(args: list, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, timeout=300, **kw)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The package built and installed (pip) into a directory of its own."""
    base = tmp_path_factory.mktemp("tinyplug")
    package = base / "src"
    package.mkdir()
    (package / "pyproject.toml").write_text(PYPROJECT)
    (package / "tinyplug.py").write_text(MODULE)
    site = base / "site"
    # setuptools (build isolation) comes from the package index pip is configured with
    done = _run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                 "--disable-pip-version-check", "--target", str(site), str(package)])
    assert done.returncode == 0, done.stdout + done.stderr
    assert list(site.glob("steepy_tinyplug-0.3.0.dist-info"))
    return site


def _work(tmp_path: Path, site: Path) -> tuple[Path, dict]:
    work = tmp_path / "work"
    work.mkdir()
    tool = work / "tool.sh"
    tool.write_text('#!/bin/sh\nout="$2"\nprintf "%s\\n" "$1" "$2" > "$out"\n')
    tool.chmod(0o755)
    (work / "services.yaml").write_text(SERVICES.format(tool=tool))
    (work / "workflow.yaml").write_text(WORKFLOW)
    (work / "steepy.yaml").write_text(textwrap.dedent(f"""\
        tmpPath: {work / 'tmp'}
        outPath: {work / 'out'}
        logs.processChains.path: {work / 'logs'}
        runtimes:
          tiny:
            marker: hello from steepy.yaml
        """))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STEEPY_", "STEEP_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(site)])
    return work, env


def test_listed_and_run_through_the_installed_plugins(installed, tmp_path) -> None:
    work, env = _work(tmp_path, installed)
    steepy = [sys.executable, "-m", "steepy.cli"]
    listed = _run([*steepy, "plugins", "--json"], cwd=work, env=env)
    assert listed.returncode == 0, listed.stderr
    found = {d["name"]: d for d in json.loads(listed.stdout)}
    assert found["tinyrun"] == {
        "type": "runtime", "name": "tinyrun", "version": "0.3.0",
        "scriptFile": str(installed / "tinyplug.py"), "object": "tinyplug:TinyRuntime",
        "supportedRuntime": "tiny", "origin": "entry point"}
    assert found["countlines"]["type"] == "outputAdapter"
    assert found["countlines"]["supportedDataType"] == "lines"
    assert {"other", "docker"} <= set(found)  # steepy's own runtimes are there too
    table = _run([*steepy, "plugins"], cwd=work, env=env)
    assert "tinyrun" in table.stdout and "supportedRuntime tiny" in table.stdout

    ran = _run([*steepy, "run", "workflow.yaml", "--json", "--services", "services.yaml",
                "--db", f"sqlite:///{work / 'steepy.db'}", "--agents", "1"], cwd=work, env=env)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    submission = json.loads(ran.stdout)
    assert submission["status"] == "SUCCESS"
    (result,) = submission["results"]["result"]
    path, _, count = result.partition("#")
    assert count == "2 lines"  # the output adapter made the result
    assert Path(path).is_relative_to(work / "out")
    # the runtime built the command line: its setting came first
    assert Path(path).read_text() == f"hello from steepy.yaml\n{path}\n"


def test_without_the_package_the_runtime_is_unknown(installed, tmp_path) -> None:
    work, env = _work(tmp_path, installed)
    env["PYTHONPATH"] = str(ROOT)
    ran = _run([sys.executable, "-m", "steepy.cli", "run", "workflow.yaml", "--services",
                "services.yaml", "--db", f"sqlite:///{work / 'steepy.db'}"], cwd=work, env=env)
    assert ran.returncode == 2
    assert "runtime `tiny', which steepy cannot run" in ran.stderr
    assert "Traceback" not in ran.stderr
