"""The module map stays layered: no import cycle among steepy's modules (counting the imports
inside functions too, which hide a cycle rather than remove it), and the HTTP package never
imports the command line."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT


def _modules(root: Path, package: str) -> dict[str, tuple[Path, bool]]:
    """Every module of `package' under `root': name -> (file, is a package)."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _imports(tree: ast.AST, type_only: bool = False):
    """Every import statement, at module level or inside functions, but not those only
    for type checkers (unless `type_only')."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        if _type_checking(node) and not type_only:
            for child in node.orelse:  # `else:' runs
                yield from _imports(ast.Module(body=[child], type_ignores=[]))
            continue
        yield from _imports(node, type_only)


def import_graph(root: Path, package: str, type_only: bool = False) -> dict[str, set[str]]:
    """Module -> the modules of the package it imports (`type_only': also the imports only
    for type checkers). `from a import b' counts as importing a.b when that is a module,
    else a."""
    modules = _modules(root, package)
    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in modules.items():
        targets: set[str] = set()
        for node in _imports(ast.parse(path.read_text(), str(path)), type_only):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
                continue
            base = node.module or ""
            if node.level:
                here = name.split(".") if is_package else name.split(".")[:-1]
                base = ".".join(here[:len(here) - node.level + 1] + ([base] if base else []))
            targets.update(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                           for a in node.names)
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_steepy_has_no_import_cycle() -> None:
    from steepy.cli.group import COMMANDS

    graph = import_graph(ROOT, "steepy")
    assert len(graph) > 50 and "steepy.cli.output" in graph["steepy.cli.engine"]
    # the `steepy' group imports each command's module by its name, when it is used
    graph["steepy.cli.group"] |= {f"steepy.cli.{where.split(':')[0]}"
                                  for where, _ in COMMANDS.values()}
    assert cycles(graph) == []


@pytest.mark.process  # a fresh interpreter shows what importing the package imports
def test_the_http_package_imports_nothing_from_the_cli() -> None:
    graph = import_graph(ROOT, "steepy")
    http = {name: targets for name, targets in graph.items() if name.startswith("steepy.http")}
    assert "steepy.http.client" in http
    assert {name: sorted(t for t in targets if t.startswith("steepy.cli"))
            for name, targets in http.items()} == {name: [] for name in http}
    # and at run time: every module of the package imported, no steepy.cli loaded
    names = sorted(http)
    code = (f"import importlib, sys\nfor name in {names!r}: importlib.import_module(name)\n"
            "print(sorted(m for m in sys.modules if m.startswith('steepy.cli')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    assert out == "[]\n"


@pytest.mark.process  # a fresh interpreter shows what importing a module imports
@pytest.mark.parametrize("module, absent", [
    # the server: the HTTP client only in the commands that talk to a server (httpx brings
    # its own command line, rich and pygments, 70 ms of each `steepy serve` start)
    ("steepy.http.app", ["httpx", "rich", "pygments"]),
    # the registry's interfaces name the scheduler's triggers and the query language in
    # annotations only: an engine that neither schedules nor searches loads neither for them
    ("steepy.registry.interfaces", ["apscheduler", "steepy.search", "steepy.model.schedule"]),
])
def test_what_a_process_does_not_use_it_does_not_import(module: str, absent: list[str]) -> None:
    code = (f"import importlib, sys\nimportlib.import_module({module!r})\n"
            f"print([m for m in {absent!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    assert out == "[]\n"


def test_the_checks_find_what_they_look_for(tmp_path) -> None:
    """A cycle hidden in a function, a `from . import' and TYPE_CHECKING imports."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("from pkg.sub import b\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "b.py").write_text("def f():\n    from .. import c\n")
    (package / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                  "    import pkg.d\nelse:\n    import pkg.sub.b\n")
    (package / "d.py").write_text("import pkg.c\n")
    graph = import_graph(tmp_path, "pkg")
    assert graph == {"pkg": {"pkg.sub.b"}, "pkg.sub": set(), "pkg.sub.b": {"pkg.c"},
                     "pkg.c": {"pkg.sub.b"}, "pkg.d": {"pkg.c"}}
    assert cycles(graph) == [["pkg.c", "pkg.sub.b"]]


def test_no_cycle_counting_type_only_imports() -> None:
    """An import only for type checkers still ties two modules together: none closes a
    circle either."""
    graph = import_graph(ROOT, "steepy", type_only=True)
    assert "steepy.config" in graph["steepy.agent.config"]  # (only for type checkers there)
    assert cycles(graph) == []


def _package(module: str) -> str:
    return ".".join(module.split(".")[:2])


def test_plugins_runtimes_documents_and_the_agent_keep_their_places() -> None:
    """The runtimes' seam lives with the runtimes (they import no plugin machinery), checking
    documents takes the runtimes as a parameter (no plugins), the plugins know no engine, and
    the agent gets its plugins handed (not the process's set, pluginset)."""
    graph = import_graph(ROOT, "steepy", type_only=True)
    banned = {"steepy.plugins": ("steepy.engine",), "steepy.runtimes": ("steepy.plugins",),
              "steepy.documents": ("steepy.plugins",), "steepy.config": ("steepy.plugins",
                                                                         "steepy.runtimes")}
    found = sorted((name, target) for name, targets in graph.items() for target in targets
                   if _package(target) in banned.get(_package(name), ())
                   or (_package(name) == "steepy.agent" and target == "steepy.plugins.pluginset"))
    assert found == []
    assert "steepy.runtimes.seam" in graph["steepy.runtimes.docker"]  # the check sees them


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Wing -> the wings it imports (`steepy.agent.runner' belongs to `steepy.agent')."""
    wings: dict[str, set[str]] = {_package(name): set() for name in graph}
    for name, targets in graph.items():
        wings[_package(name)] |= {_package(t) for t in targets} - {_package(name)}
    return wings


def test_no_loop_between_packages() -> None:
    """Wings import one way: no two packages import each other, however indirectly (type-only
    imports count)."""
    wings = package_graph(import_graph(ROOT, "steepy", type_only=True))
    assert {"steepy.engine", "steepy.agent", "steepy.registry"} <= set(wings)
    assert "steepy.agent" in wings["steepy.engine"]  # (the check sees the edges)
    assert cycles(wings) == []


# what may lie at the top of steepy/: the package's face and what every wing shares
TOP = {"__init__.py", "__main__.py", "errors.py"}


def test_nothing_loose_at_the_top() -> None:
    """Every module belongs to a wing (a package), except the few every wing shares."""
    loose = sorted(p.name for p in (ROOT / "steepy").glob("*.py") if p.name not in TOP)
    assert loose == []


def test_the_loop_check_finds_a_loop_between_packages() -> None:
    graph = {"steepy.a.x": {"steepy.b.y"}, "steepy.b.y": set(), "steepy.b.z": {"steepy.a"},
             "steepy.a": set()}
    assert cycles(package_graph(graph)) == [["steepy.a", "steepy.b"]]
