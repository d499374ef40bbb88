"""A plugin's `object: module:attribute' is looked for beside the configuration file first,
then on the import path: a module next to steepy.yaml (or conf/steep.yaml) needs no
PYTHONPATH, finds its own neighbours, and wins over a module of the same name elsewhere."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from steepy.config import load_config
from steepy.errors import InputError
from steepy.model.ids import unique_id
from steepy.plugins.pluginset import load_plugins

ADAPTER = '''\
from {helper} import WHERE


def adapt(chains, workflow):
    return chains


adapt.where = WHERE
'''


@pytest.fixture
def name(monkeypatch) -> str:
    """A fresh module name; the import path and the imported modules as they were after."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    module = f"beside_{unique_id().replace('-', '_')}"
    yield module
    for loaded in [m for m in sys.modules if m.startswith(module)]:
        del sys.modules[loaded]


def _project(folder: Path, name: str, config: str = "steepy.yaml", where: str = "beside") -> Path:
    """A folder with the configuration `config', a plugin module beside it and the module's
    helper beside that."""
    path = folder / config
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(f"""\
        plugins:
          - name: tidy
            type: processChainAdapter
            object: {name}:adapt
        """))
    (path.parent / f"{name}.py").write_text(ADAPTER.format(helper=f"{name}_helper"))
    (path.parent / f"{name}_helper.py").write_text(f"WHERE = {where!r}\n")
    return path.parent


@pytest.mark.parametrize("config", ["steepy.yaml", "conf/steep.yaml"])
def test_a_module_beside_the_configuration_needs_no_pythonpath(tmp_path, monkeypatch, name,
                                                               config) -> None:
    project = tmp_path / "project"
    beside = _project(project, name, config)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # not the working directory: the configuration's folder
    [plugin] = load_plugins(load_config(project, environ={})).of("processChainAdapter")
    assert plugin.descriptor()["scriptFile"] == str(beside / f"{name}.py")
    assert plugin.implementation.__wrapped__.where == "beside"  # its own neighbour imported too


def test_beside_the_configuration_comes_first(tmp_path, monkeypatch, name) -> None:
    other = _project(tmp_path / "installed", name, where="elsewhere")
    monkeypatch.syspath_prepend(str(other))
    _project(tmp_path / "project", name)
    [plugin] = load_plugins(load_config(tmp_path / "project", environ={})).of(
        "processChainAdapter")
    assert plugin.implementation.__wrapped__.where == "beside"


def test_a_module_neither_beside_nor_importable_says_where_it_was_looked_for(tmp_path,
                                                                            name) -> None:
    (tmp_path / "steepy.yaml").write_text(
        f"plugins:\n  - {{name: tidy, type: processChainAdapter, object: '{name}:adapt'}}\n")
    with pytest.raises(InputError) as caught:
        load_plugins(load_config(tmp_path, environ={}))
    [problem] = caught.value.problems
    assert problem.message == (f"plugin `tidy' (processChainAdapter): cannot import `{name}': "
                               f"No module named '{name}' (looked in {tmp_path} and on the "
                               "import path)")


@pytest.mark.process
def test_the_installed_command_finds_a_plugin_beside_steepy_yaml(tmp_path, name) -> None:
    """The console script (its folder, not the working directory, starts the import path)."""
    _project(tmp_path, name)
    steepy = Path(sys.executable).parent / "steepy"
    done = subprocess.run([str(steepy), "plugins", "--json"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    tidy = next(d for d in json.loads(done.stdout) if d["name"] == "tidy")
    assert tidy["scriptFile"] == str(tmp_path / f"{name}.py")


RUNTIMES = {
    "exits": ("import sys\nsys.exit(3)\n",
              "importing `{name}' failed: SystemExit: 3"),
    "raising-property": ("class R:\n    @property\n    def supported_runtime(self):\n"
                         "        raise RuntimeError('no name')\n\n"
                         "    def command(self, executable, context):\n        pass\n",
                         "reading `supported_runtime' of `R' failed: RuntimeError: no name"),
    "number": ("class R:\n    supported_runtime = 5\n\n"
               "    def command(self, executable, context):\n        pass\n",
               "`supported_runtime' of `R' must be the name of a runtime (text), not int `5'"),
}


@pytest.mark.parametrize("case", sorted(RUNTIMES))
def test_a_runtime_plugin_that_exits_or_raises_while_read_is_a_located_problem(
        tmp_path, name, case) -> None:
    """A module that calls sys.exit at import ended `steepy plugins' with its code and no word;
    a property that raises was a traceback; a number was taken as a runtime's name."""
    source, expected = RUNTIMES[case]
    (tmp_path / f"{name}.py").write_text(source)
    (tmp_path / "steepy.yaml").write_text(
        f"plugins:\n  - {{name: mine, type: runtime, object: '{name}:R'}}\n")
    with pytest.raises(InputError) as caught:
        load_plugins(load_config(tmp_path, environ={}))
    [problem] = caught.value.problems
    assert problem.message == f"plugin `mine' (runtime): {expected.format(name=name)}"
    assert (problem.file, problem.line) == (str(tmp_path / "steepy.yaml"), 2)
