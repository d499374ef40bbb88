"""Finding plugins and checking them as they are loaded.

Three sources, in this order (a later one may take over a runtime or data type of an earlier):
steepy's own runtimes (`steepy.runtimes.BUILTIN`), the entry points of installed packages (one group
per kind, e.g. `steepy.runtimes`, the entry point's name is the plugin's name), and the
`plugins` of steepy.yaml (Steep's descriptor with `object: module:attribute`, in steepy.yaml or
in the descriptor files it names; the module is looked for beside the file that declares it
first, then on the import path).

A plugin that cannot be used stops loading with a `PluginError`: one located line naming the
plugin and what is missing (the CLI prints it and exits with code 2).
"""

from __future__ import annotations

import graphlib
import importlib
import importlib.abc
import importlib.util
import inspect
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

from steepy.errors import InputError, Problem
from steepy.plugins.kinds import KINDS, Kind
from steepy.runtimes import BUILTIN
from steepy.runtimes.seam import settings_class

__all__ = ["Plugin", "PluginError", "builtin_plugins", "entry_point_plugins", "declared_plugins",
           "load_object", "order_by_dependencies"]


class PluginError(InputError):
    """A plugin cannot be used: what is wrong, where it was declared."""


class Declaration(Protocol):
    """One entry of steepy.yaml's `plugins' (`steepy.config.model.PluginDeclaration')."""

    name: str
    type: str
    object: str | None
    version: str | None
    supported_runtime: str | None
    supported_data_type: str | None
    supported_service_ids: list[str] | None
    depends_on: list[str]


class Declarations(Protocol):
    """What loading reads of the configuration (`steepy.config.Config' is one)."""

    @property
    def plugins(self) -> Sequence[Declaration]: ...

    @property
    def source(self) -> str | None: ...  # the configuration file (None: none was read)

    def plugin_place(self, index: int) -> Problem: ...


@dataclass
class Plugin:
    """A loaded, checked plugin and its descriptor (Steep's fields)."""

    name: str
    kind: Kind
    implementation: Any  # has `kind.method'
    origin: str  # `builtin', `entry point', `steepy.yaml' or the descriptor file's path
    object: str | None = None  # `module:attribute'
    version: str | None = None
    selector: Any = None  # supportedRuntime / supportedDataType / supportedServiceIds
    depends_on: list[str] = field(default_factory=list)

    @property
    def call(self) -> Callable:
        return getattr(self.implementation, self.kind.method)

    def descriptor(self) -> dict:
        """Steep's plugin descriptor (`GET /plugins'): `object' (and the file that holds it,
        as `scriptFile') where Steep names a Kotlin script."""
        out: dict[str, Any] = {"type": self.kind.type, "name": self.name}
        if self.version is not None:
            out["version"] = self.version
        source = _source_file(self.implementation)
        if source is not None:
            out["scriptFile"] = source
        if self.object is not None:
            out["object"] = self.object
        if self.kind.selector is not None:
            out[self.kind.selector] = self.selector
        if self.kind.depends:
            out["dependsOn"] = list(self.depends_on)
        out["origin"] = self.origin
        return out


def _source_file(implementation: Any) -> str | None:
    target = implementation if inspect.isroutine(implementation) else type(implementation)
    target = getattr(implementation, "__wrapped__", target)
    try:
        return inspect.getsourcefile(target)
    except TypeError:
        return None


class _Function:
    """A plain function standing for the one method of its kind."""

    def __init__(self, function: Callable, method: str) -> None:
        self.__wrapped__ = function
        setattr(self, method, function)
        for attribute in ("version", "supported_runtime", "supported_data_type",
                          "supported_service_ids", "depends_on", "settings_class"):
            if hasattr(function, attribute):
                setattr(self, attribute, getattr(function, attribute))


class _Beside(importlib.abc.MetaPathFinder):
    """Finds the top-level modules that are files (or packages) in one folder, none named
    like a module of the standard library. While a plugin module of that folder is imported
    it comes first, so the module finds its own neighbours as a script finds those in its
    folder; then it goes last, so later imports of the process find what they always do and
    only a neighbour nothing else provides (imported late, in a function) is taken from there."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if path is not None or name in sys.stdlib_module_names:  # a submodule; the stdlib's
            return None
        return _spec_beside(name, self.folder)


def _spec_beside(name: str, folder: Path) -> Any:
    """The spec of the top-level module `name' that is a file or package in `folder'; None."""
    package = folder / name / "__init__.py"
    if package.is_file():
        return importlib.util.spec_from_file_location(
            name, package, submodule_search_locations=[str(package.parent)])
    module = folder / f"{name}.py"
    return importlib.util.spec_from_file_location(name, module) if module.is_file() else None


_FINDERS: dict[Path, _Beside] = {}  # one a folder, kept last on sys.meta_path once used


def _import_beside(module_name: str, folder: Path) -> None:
    """Import the top-level module of `module_name' from its file in `folder' (when it is
    there), registered in sys.modules under its name (so its own references and pickling find
    it); a module of that name already imported from elsewhere gives way to it. sys.path is
    left alone: a `queue.py' there never hides the standard library's `queue'."""
    folder = folder.resolve()
    top = module_name.split(".")[0]
    spec = _spec_beside(top, folder)
    if spec is None or top in sys.stdlib_module_names:  # (`_misnamed' says so)
        return
    loaded = sys.modules.get(top)
    if loaded is not None and getattr(loaded, "__file__", None) == spec.origin:
        return  # imported already (the plugins are loaded more than once a process)
    finder = _FINDERS.setdefault(folder, _Beside(folder))
    if finder in sys.meta_path:
        sys.meta_path.remove(finder)
    sys.meta_path.insert(0, finder)
    module = importlib.util.module_from_spec(spec)
    sys.modules[top] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(top, None)
        raise
    finally:
        sys.meta_path.remove(finder)
        sys.meta_path.append(finder)


def _misnamed(top: str, folder: Path) -> None:
    """A plugin module beside the configuration named like one of the standard library
    (`queue.py'): ValueError, as it could not be imported without hiding that one."""
    spec = _spec_beside(top, folder)
    if spec is not None and top in sys.stdlib_module_names:
        raise ValueError(f"`{spec.origin}' has the name of the standard library's `{top}': "
                         "rename it")


def load_object(reference: str, beside: Path | None = None) -> Any:
    """The object `module:attribute' (attribute may be dotted), its module looked for in the
    folder `beside' first; ValueError saying why not."""
    module_name, _, attribute = reference.partition(":")
    if beside is not None:
        _misnamed(module_name.split(".")[0], beside.resolve())
    try:
        if beside is not None:
            _import_beside(module_name, beside)
        target: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        where = "" if beside is None else f" (looked in {beside.resolve()} and on the import path)"
        raise ValueError(f"cannot import `{module_name}': {e}{where}") from None
    except (Exception, SystemExit) as e:  # the plugin's own module failed while importing
        raise ValueError(f"importing `{module_name}' failed: {type(e).__name__}: {e}") from None
    path = module_name
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise ValueError(f"`{path}' has no attribute `{part}'")
        target, path = getattr(target, part), f"{path}.{part}"
    return target


def _implementation(target: Any, kind: Kind) -> Any:
    """The object that carries the kind's method: `target', an instance of it, or a function
    wrapped; ValueError saying what is missing."""
    if inspect.isclass(target):
        try:
            target = target()
        except Exception as e:
            raise ValueError(f"cannot make an instance of `{target.__name__}' without "
                             f"arguments: {type(e).__name__}: {e}") from None
    elif inspect.isroutine(target):
        target = _Function(target, kind.method)
    method = getattr(target, kind.method, None)
    wanted = f"{kind.method}({', '.join(kind.parameters)})"
    if not callable(method):
        others = sorted({k.words for k in KINDS.values()
                         if k.method != kind.method and callable(getattr(target, k.method, None))})
        hint = f"; it looks like a{'n' if others[0][0] in 'aeiou' else ''} {' or '.join(others)}" \
            if others else ""
        raise ValueError(f"a {kind.words} needs a method {wanted}, `{_what(target)}' has none"
                         f"{hint}")
    try:
        inspect.signature(method).bind(*kind.parameters)
    except TypeError:
        raise ValueError(f"{kind.method}{inspect.signature(method)} of `{_what(target)}' cannot "
                         f"be called as {wanted}") from None
    except ValueError:  # no signature to inspect (a builtin): trust it
        pass
    if kind.type == "runtime":
        settings_class(target)  # ValueError: one that is no RuntimeSettings
    return target


def _what(target: Any) -> str:
    if isinstance(target, _Function):
        return getattr(target.__wrapped__, "__qualname__", repr(target.__wrapped__))
    return type(target).__qualname__


def _selector(kind: Kind, name: str, declared: Any, target: Any) -> Any:
    if kind.selector is None:
        return None
    try:
        value = declared if declared is not None else getattr(target, kind.attribute or "", None)
    except Exception as e:  # (a property of the plugin's that raises)
        raise ValueError(f"reading `{kind.attribute}' of `{_what(target)}' failed: "
                         f"{type(e).__name__}: {e}") from None
    if kind.type == "runtime":
        if value is not None and not isinstance(value, str):
            raise ValueError(f"`{kind.attribute}' of `{_what(target)}' must be the name of a "
                             f"runtime (text), not {type(value).__name__} `{value}'")
        return str(value or name)
    if kind.type == "progressEstimator":
        if isinstance(value, str):
            value = [value]
        if not value or not all(isinstance(v, str) for v in value):
            raise ValueError(f"a progress estimator needs `supportedServiceIds' (steepy.yaml) or "
                             f"a `{kind.attribute}' attribute: the services it estimates")
        return list(value)
    if not isinstance(value, str) or not value:
        raise ValueError(f"a{'n' if kind.words[0] in 'aeiou' else ''} {kind.words} needs "
                         f"`{kind.selector}' (steepy.yaml) or a `{kind.attribute}' attribute: "
                         "the data type it handles")
    return value


def _make(name: str, kind: Kind, target: Any, origin: str, reference: str | None,
          version: Any = None, selector: Any = None, depends_on: Any = None) -> Plugin:
    implementation = _implementation(target, kind)
    if version is None:
        version = getattr(implementation, "version", None)
    if depends_on is None:
        depends_on = getattr(implementation, "depends_on", None) or []
    return Plugin(name, kind, implementation, origin, reference,
                  None if version is None else str(version),
                  _selector(kind, name, selector, implementation), list(depends_on))


def builtin_plugins() -> list[Plugin]:
    return [_make(name, KINDS["runtime"], runtime, "builtin",
                  f"{type(runtime).__module__}:{type(runtime).__qualname__}")
            for name, runtime in BUILTIN.items()]


def entry_point_plugins() -> list[Plugin]:
    """The plugins installed packages offer, every entry-point group of every kind."""
    found: list[Plugin] = []
    installed = metadata.entry_points()  # every package scanned once, not once per kind
    for kind in KINDS.values():
        seen: set[tuple[str, str]] = set()
        for point in installed.select(group=kind.group):
            if (point.name, point.value) in seen:  # one distribution found twice on the path
                continue
            seen.add((point.name, point.value))
            dist = getattr(point, "dist", None)
            where = (f"{dist.name} {dist.version}" if dist is not None else "an installed package")
            place = Problem("", file=f"{where} (entry point `{point.name} = {point.value}' in "
                                     f"{kind.group})")
            try:
                found.append(_make(point.name, kind, load_object(point.value), "entry point",
                                   point.value, None if dist is None else dist.version))
            except ValueError as e:
                raise _error(place, point.name, kind, str(e)) from None
    return found


def declared_plugins(config: Declarations) -> list[Plugin]:
    """The plugins of steepy.yaml's `plugins' (or of the descriptor files it names), their
    modules looked for beside the file that declares them first."""
    source = None if config.source is None else Path(config.source)
    found: list[Plugin] = []
    for index, declaration in enumerate(config.plugins):
        place = config.plugin_place(index)
        # the file it was declared in (a variable, STEEPY_PLUGINS, counts as steepy.yaml)
        file = Path(place.file) if place.file and Path(place.file).is_file() else source
        in_config = file is None or source is None or file.resolve() == source.resolve()
        found.append(_declared(declaration, place, file and file.parent,
                               "steepy.yaml" if in_config else str(file)))
    return found


def _declared(declaration: Declaration, place: Problem, beside: Path | None,
              origin: str) -> Plugin:
    kind = KINDS[declaration.type]
    selector = {"runtime": declaration.supported_runtime,
                "progressEstimator": declaration.supported_service_ids}.get(
        kind.type, declaration.supported_data_type)
    assert declaration.object is not None  # checked with the configuration
    try:
        target = load_object(declaration.object, beside)
        return _make(declaration.name, kind, target, origin, declaration.object,
                     declaration.version, selector, declaration.depends_on or None)
    except ValueError as e:
        raise _error(place, declaration.name, kind, str(e)) from None


def _error(place: Problem, name: str, kind: Kind, message: str) -> PluginError:
    return PluginError(Problem(f"plugin `{name}' ({kind.type}): {message}", path=place.path,
                               file=place.file, line=place.line, column=place.column))


def order_by_dependencies(plugins: list[Plugin], place: Callable[[Plugin], Problem]
                          ) -> list[Plugin]:
    """Plugins of one kind, each after those it names in `dependsOn' (else as declared)."""
    by_name = {p.name: p for p in plugins}
    sorter: graphlib.TopologicalSorter = graphlib.TopologicalSorter()
    for plugin in plugins:
        for dependency in plugin.depends_on:
            if dependency not in by_name:
                raise _error(place(plugin), plugin.name, plugin.kind,
                             f"depends on `{dependency}', which is no {plugin.kind.words} "
                             f"(known: {', '.join(by_name) or 'none'})")
        sorter.add(plugin.name, *plugin.depends_on)
    try:
        sorter.prepare()
    except graphlib.CycleError as e:
        cycle = " -> ".join(e.args[1])
        first = by_name[e.args[1][0]]
        raise _error(place(first), first.name, first.kind,
                     f"`dependsOn' goes round in a circle: {cycle}") from None
    # no cycle: take the first declared plugin whose dependencies are placed, again and again
    done: list[Plugin] = []
    placed: set[str] = set()
    waiting = list(plugins)
    while waiting:
        ready = next(p for p in waiting if all(d in placed for d in p.depends_on))
        waiting.remove(ready)
        done.append(ready)
        placed.add(ready.name)
    return done
