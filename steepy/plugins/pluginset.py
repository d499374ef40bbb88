"""The plugins of one steepy process, and what its parts ask them.

    plugins = load_plugins(config)   # steepy's runtimes + entry points + steepy.yaml, checked
    plugins.runtime("docker")        # the agent: how to start and stop an attempt
    plugins.estimate(exe, lines)     # the agent: progress of a running executable

`active()` is the process's set: the one `use()`d by the command that read the configuration
(run, worker, serve), else steepy's runtimes, the installed ones and steepy.yaml's in the
working directory (e.g. for `steepy validate`).
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
from typing import TYPE_CHECKING, Any, Callable

from steepy.errors import InputError, Problem
from steepy.model import ExecuteAction, Executable, ProcessChain, Workflow
from steepy.model.processchain import Argument
from steepy.plugins.kinds import KINDS
from steepy.plugins.loading import (Plugin, PluginError, builtin_plugins, declared_plugins,
                                    entry_point_plugins, order_by_dependencies)

if TYPE_CHECKING:
    from steepy.config import Config
    from steepy.engine.engine import Engine

__all__ = ["PluginSet", "load_plugins", "active", "use", "builtin_set", "supported_runtimes",
           "serving"]

log = logging.getLogger(__name__)


class PluginSet:
    def __init__(self, plugins: list[Plugin], runtime_settings: dict[str, dict] | None = None,
                 place: Callable[[Plugin], Problem] | None = None) -> None:
        place = place or (lambda p: Problem("", file=p.origin))
        seen: dict[str, Plugin] = {}
        for plugin in plugins:
            if plugin.name in seen:
                first = seen[plugin.name]
                raise PluginError(Problem(
                    f"plugin `{plugin.name}' ({plugin.kind.type}): the name is taken by the "
                    f"{first.kind.words} from {first.origin} ({first.object})",
                    **_where(place(plugin))))
            seen[plugin.name] = plugin
        self.plugins = list(plugins)
        self.warnings: list[Problem] = []  # settings of runtimes that are not loaded
        self._ordered = {kind: order_by_dependencies(self.of(kind), place)
                         for kind, spec in KINDS.items() if spec.depends}
        self._runtime_settings = dict(runtime_settings or {})
        # a later plugin takes over the runtime or data type of an earlier one
        self._runtimes = {p.selector: p for p in self.of("runtime")}
        self._outputs = {p.selector: p for p in self.of("outputAdapter")}
        self._inputs = {p.selector: p for p in self.of("inputAdapter")}
        self._estimators = {s: p for p in self.of("progressEstimator") for s in p.selector}

    def of(self, kind: str) -> list[Plugin]:
        ordered = getattr(self, "_ordered", {}).get(kind)
        return list(ordered) if ordered is not None else [p for p in self.plugins
                                                          if p.kind.type == kind]

    def descriptors(self) -> list[dict]:
        return [p.descriptor() for p in self.plugins]

    # -- runtimes --------------------------------------------------------------------------------

    def runtime(self, name: str) -> Any | None:
        plugin = self._runtimes.get(name)
        return None if plugin is None else plugin.implementation

    def runtime_names(self) -> list[str]:
        return list(self._runtimes)

    def runtime_settings(self, name: str) -> dict[str, Any]:
        """`runtimes.<name>.*' of steepy.yaml for a runtime plugin."""
        return dict(self._runtime_settings.get(name, {}))

    # -- the agent: inputs, outputs, progress ----------------------------------------------------

    def output_data_types(self) -> frozenset[str]:
        return frozenset(self._outputs)

    def adapt_output(self, output: Argument, chain: ProcessChain) -> list | None:
        """The results of `output' by its data type's adapter (None: no adapter)."""
        plugin = self._outputs.get(output.data_type)
        return None if plugin is None else list(plugin.call(output, chain))

    def adapt_inputs(self, exe: Executable, chain: ProcessChain) -> Executable:
        """`exe' with each input argument of an adapted data type replaced by the arguments
        its input adapter makes of it (the same object when nothing is adapted)."""
        if not self._inputs or not any(a.type == "input" and a.data_type in self._inputs
                                       for a in exe.arguments):
            return exe
        arguments: list[Argument] = []
        for argument in exe.arguments:
            plugin = self._inputs.get(argument.data_type) if argument.type == "input" else None
            arguments.extend([argument] if plugin is None else plugin.call(argument, chain))
        return dataclasses.replace(exe, arguments=arguments)

    def has_estimators(self) -> bool:
        return bool(self._estimators)

    def estimate(self, exe: Executable, recent_lines: list[str]) -> float | None:
        """Progress of `exe' (0..1) by the estimator of its service (None: none, or unknown)."""
        plugin = self._estimators.get(exe.service_id)
        return None if plugin is None else plugin.call(exe, recent_lines)

    # -- the controller: generating chains -------------------------------------------------------

    def consistency_checker(self, workflow: Workflow
                            ) -> Callable[[list[Executable], ExecuteAction], bool] | None:
        """What the generator asks before it appends an action to a chain: every checker
        must agree (None: no checker)."""
        checkers = [p.call for p in self.of("processChainConsistencyChecker")]
        if not checkers:
            return None

        def check(executables: list[Executable], action: ExecuteAction) -> bool:
            return all(c(list(executables), action, workflow) for c in checkers)

        return check

    def adapt_chains(self, chains: list[ProcessChain], workflow: Workflow) -> list[ProcessChain]:
        """The generated chains after every process chain adapter, before they are stored."""
        for plugin in self.of("processChainAdapter"):
            if chains:
                chains = list(plugin.call(list(chains), workflow))
        return chains

    async def initialize(self) -> None:
        """Run the initializers (at start, before anything is looked for)."""
        for plugin in self.of("initializer"):
            result = plugin.call()
            if inspect.isawaitable(result):
                await result


def _where(place: Problem) -> dict:
    return {"path": place.path, "file": place.file, "line": place.line, "column": place.column}


def load_plugins(config: "Config | None" = None) -> PluginSet:
    """steepy's runtimes, the installed plugins and (with `config') steepy.yaml's, checked;
    PluginError for the first one that cannot be used."""
    plugins = builtin_plugins() + entry_point_plugins()
    places: dict[int, Problem] = {}
    if config is not None:
        declared = declared_plugins(config)
        places = {id(p): config.plugin_place(i) for i, p in enumerate(declared)}
        plugins += declared

    def place(plugin: Plugin) -> Problem:
        return places.get(id(plugin)) or Problem("", file=f"{plugin.origin} {plugin.object}")

    settings = {} if config is None else {
        p.selector: config.runtime_settings(p.selector) for p in plugins
        if p.kind.type == "runtime"}
    found = PluginSet(plugins, settings, place)
    if config is not None:  # e.g. a typing error in `runtimes.slrum.partition'
        found.warnings = config.runtime_setting_problems(found.runtime_names())
    return found


_active: PluginSet | None = None
_builtin: PluginSet | None = None


def builtin_set() -> PluginSet:
    """steepy's own runtimes only (what an agent made without a configuration has)."""
    global _builtin
    if _builtin is None:
        _builtin = PluginSet(builtin_plugins())
    return _builtin


def use(plugins: PluginSet) -> None:
    """Make `plugins' the process's set (the command that read the configuration does)."""
    global _active
    _active = plugins


def active() -> PluginSet:
    global _active
    if _active is None:
        from steepy.config import load_config

        try:
            _active = load_plugins(load_config())
        except InputError as e:  # the command that runs them says so; here: what loads
            log.warning("plugins: %s", e)
            try:
                _active = load_plugins()
            except PluginError:
                _active = builtin_set()
    return _active


def serving(engine: "Engine | None") -> PluginSet:
    """The plugins a server shows (`GET /plugins', the web UI): its engine's, read with its
    configuration, else (an API-only server) the process's."""
    return engine.settings.agent.plugins if engine is not None else active()


def supported_runtimes() -> tuple[str, ...]:
    """The runtimes this process can run services with."""
    return tuple(active().runtime_names())
