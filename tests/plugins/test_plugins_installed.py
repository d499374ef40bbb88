"""A runtime and an output adapter added as a separate installed package with entry points:
steepy lists them, and a workflow whose service has `runtime: tiny' runs through them. The
runtime is one module and an entry point; its `runtimes.tiny' settings are checked with the
configuration like those of steepy's own runtimes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = [pytest.mark.process, pytest.mark.slow]

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

from steepy.runtimes import Launch, RuntimeSettings, argument_list


class TinySettings(RuntimeSettings):
    marker: str = "no marker"
    repeat: int = 1


class TinyRuntime:
    supported_runtime = "tiny"
    settings_class = TinySettings

    def command(self, executable, context):
        markers = [context.settings.marker] * context.settings.repeat
        return Launch([executable.path, *markers, *argument_list(executable.arguments)])


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


def test_a_runtime_is_one_module_and_an_entry_point(installed) -> None:
    """What the package holds (besides what building it left): the module with the runtime
    and its settings class, and the project file with the entry point."""
    package = installed.parent / "src"
    assert sorted(p.name for p in package.iterdir() if p.is_file()) == [
        "pyproject.toml", "tinyplug.py"]
    assert PYPROJECT.count('"steepy.runtimes"') == 1 and "class TinySettings" in MODULE


@pytest.mark.parametrize("settings, problem", [
    ("    marker: [a, b]\n",
     "steepy.yaml:6:13: runtimes.tiny.marker: expected a string, got a list"),
    ("    repeat: often\n",
     "steepy.yaml:6:13: runtimes.tiny.repeat: expected a whole number, got a string `often'"),
    ("    markr: x\n",
     "steepy.yaml:6:12: runtimes.tiny.markr: runtime `tiny' has no setting `markr'; did you mean "
     "marker? (its settings: marker, repeat)"),
])
def test_its_settings_are_checked_with_the_configuration(installed, tmp_path, settings,
                                                         problem) -> None:
    """A bad value of an installed runtime's settings stops `validate' and `run' (exit 2, at
    its file:line:column) before anything is stored, as one of steepy's own runtimes would."""
    work, env = _work(tmp_path, installed)
    config = work / "steepy.yaml"
    config.write_text(config.read_text().replace("    marker: hello from steepy.yaml\n", settings))
    for args in (["validate", "workflow.yaml", "--services", "services.yaml"],
                 ["run", "workflow.yaml", "--services", "services.yaml",
                  "--db", f"sqlite:///{work / 'steepy.db'}"]):
        done = _run([sys.executable, "-m", "steepy.cli", *args], cwd=work, env=env)
        assert done.returncode == 2, done.stdout + done.stderr
        assert done.stderr.splitlines()[0] == problem, done.stderr
        assert "Traceback" not in done.stderr and "warning" not in done.stderr
    assert not (work / "steepy.db").exists()


def test_a_variable_sets_it_too_and_reaches_the_runtime_checked(installed, tmp_path) -> None:
    work, env = _work(tmp_path, installed)
    config = work / "steepy.yaml"
    config.write_text(config.read_text() + "    repeat: '1'\n")  # a number, as YAML text
    env["STEEPY_RUNTIMES_TINY_MARKER"] = "from a variable"  # over the file's
    ran = _run([sys.executable, "-m", "steepy.cli", "run", "workflow.yaml", "--json",
                "--services", "services.yaml", "--db", f"sqlite:///{work / 'steepy.db'}",
                "--agents", "1"], cwd=work, env=env)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    (result,) = json.loads(ran.stdout)["results"]["result"]
    path = result.partition("#")[0]
    assert Path(path).read_text() == f"from a variable\n{path}\n"
