"""A plugin module beside steepy.yaml is imported from its file, not by putting the
configuration's folder on the import path: a `queue.py' there does not hide the standard
library's `queue' from the rest of the process, while the plugin still finds its neighbours
(also late, in a function) and its objects pickle."""

from __future__ import annotations

import importlib
import importlib.machinery
import pickle
import sys
import sysconfig
from pathlib import Path

import pytest

from steepy.config import load_config
from steepy.errors import InputError
from steepy.model.ids import unique_id
from steepy.plugins.pluginset import load_plugins

STDLIB = Path(sysconfig.get_paths()["stdlib"]).resolve()

PLUGIN = '''\
import queue


class Result:
    def __init__(self, value):
        self.value = value


def adapt(chains, workflow):
    from {helper} import WHERE  # a neighbour imported late, after the plugins were loaded
    return WHERE


adapt.queue_file = queue.__file__
'''


@pytest.fixture
def name(monkeypatch) -> str:
    """A fresh module name; the import path, the finders and the modules as they were after."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    module = f"beside_{unique_id().replace('-', '_')}"
    yield module
    for loaded in [m for m in sys.modules if m.startswith(module)]:
        del sys.modules[loaded]


def _project(folder: Path, name: str) -> Path:
    (folder / "steepy.yaml").write_text(
        f"plugins:\n  - {{name: tidy, type: processChainAdapter, object: '{name}:adapt'}}\n")
    (folder / f"{name}.py").write_text(PLUGIN.format(helper=f"{name}_helper"))
    (folder / f"{name}_helper.py").write_text("WHERE = 'beside'\n")
    (folder / "queue.py").write_text("raise RuntimeError('the queue.py beside steepy.yaml')\n")
    return folder


def _in_stdlib(path: str | None) -> bool:
    return path is not None and Path(path).resolve().is_relative_to(STDLIB)


def test_a_queue_py_beside_steepy_yaml_does_not_hide_the_standard_library(tmp_path,
                                                                         name) -> None:
    _project(tmp_path, name)
    path_before = list(sys.path)
    [plugin] = load_plugins(load_config(tmp_path, environ={})).of("processChainAdapter")
    assert _in_stdlib(plugin.implementation.__wrapped__.queue_file)  # the plugin's own too
    assert sys.path == path_before
    assert _in_stdlib(importlib.machinery.PathFinder.find_spec("queue").origin)
    imported = sys.modules.pop("queue")
    try:  # imported afresh, through every finder
        assert _in_stdlib(importlib.import_module("queue").__file__)
    finally:
        sys.modules["queue"] = imported


def test_the_plugin_finds_a_neighbour_late_and_its_objects_pickle(tmp_path, name) -> None:
    _project(tmp_path, name)
    [plugin] = load_plugins(load_config(tmp_path, environ={})).of("processChainAdapter")
    assert plugin.call([], None) == "beside"
    module = sys.modules[name]
    assert module.__file__ == str(tmp_path / f"{name}.py")
    copy = pickle.loads(pickle.dumps(module.Result(3)))
    assert type(copy) is module.Result and copy.value == 3
    # loaded again (the API and the CLI load the plugins more than once): the same module
    load_plugins(load_config(tmp_path, environ={}))
    assert sys.modules[name] is module


def test_a_plugin_module_named_like_the_standard_library_is_refused(tmp_path, name) -> None:
    (tmp_path / "steepy.yaml").write_text(
        "plugins:\n  - {name: tidy, type: processChainAdapter, object: 'queue:adapt'}\n")
    (tmp_path / "queue.py").write_text("def adapt(chains, workflow):\n    return chains\n")
    with pytest.raises(InputError) as caught:
        load_plugins(load_config(tmp_path, environ={}))
    [problem] = caught.value.problems
    assert problem.message == (f"plugin `tidy' (processChainAdapter): `{tmp_path / 'queue.py'}' "
                               "has the name of the standard library's `queue': rename it")
    assert _in_stdlib(sys.modules["queue"].__file__)
