"""The loaded plugins of one steepy process, and what its parts ask them.

    plugins.runtime("docker")        # the agent: how to start and stop an attempt
    plugins.runtime_settings("slurm")  # ... with the runtime's checked settings
    plugins.estimate(exe, lines)     # the agent: progress of a running executable
    plugins.runtimes()               # validation: the runtimes services may name

A `PluginSet' is a value: it reads no configuration and no process-wide state (loading one
with the configuration, and the process's set, are `steepy.plugins.pluginset').
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, Callable, TypeVar

from steepy.config.model import runtime_defaults
from steepy.documents.validation_services import Runtimes
from steepy.errors import InputError, Problem
from steepy.model import ExecuteAction, Executable, ProcessChain, Workflow
from steepy.model.limits import NO_SITE, SiteRetries
from steepy.model.processchain import Argument
from steepy.plugins.kinds import KINDS
from steepy.plugins.loading import Plugin, PluginError, builtin_plugins, order_by_dependencies
from steepy.runtimes import STEEP_ONLY
from steepy.runtimes.seam import RuntimeSettings, settings_class

__all__ = ["PluginSet", "builtin_set"]

S = TypeVar("S", bound=RuntimeSettings)


class PluginSet:
    def __init__(self, plugins: list[Plugin], place: Callable[[Plugin], Problem] | None = None,
                 settings: Callable[[str, type[S]], S] | None = None) -> None:
        """`settings(runtime, its settings class)': the checked `runtimes.<name>' section
        (`steepy.config.Config.runtime_settings'; None: every runtime's defaults)."""
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
        # a later plugin takes over the runtime or data type of an earlier one
        self._runtimes = {p.selector: p for p in self.of("runtime")}
        self._runtime_settings = _settings(self._runtimes, settings or runtime_defaults)
        self._outputs = {p.selector: p for p in self.of("outputAdapter")}
        self._inputs = {p.selector: p for p in self.of("inputAdapter")}
        self._estimators = {s: p for p in self.of("progressEstimator") for s in p.selector}
        self._retry_policies = {p.name: p for p in self.of("retryPolicy")}
        self.retries: SiteRetries = NO_SITE  # steepy.yaml `retries' (set by load_plugins)

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

    def runtime_settings(self, name: str) -> RuntimeSettings:
        """The runtime's checked `runtimes.<name>' settings (an instance of its class)."""
        return self._runtime_settings.get(name) or RuntimeSettings()

    def runtimes(self) -> Runtimes:
        """What checking a workflow needs to know of these runtimes (`validate_workflow')."""
        return Runtimes(tuple(self._runtimes), {name: hint for name, hint in STEEP_ONLY.items()
                                                if name not in self._runtimes}, self.retries,
                        tuple(self._retry_policies))

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

    def retry_policy(self, name: str) -> Callable | None:
        """The `next' method of the `retryPolicy' plugin `name' (None: there is none)."""
        plugin = self._retry_policies.get(name)
        return None if plugin is None else plugin.call

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


def _settings(runtimes: dict[str, Plugin], settings: Callable[[str, type[S]], S]
              ) -> dict[str, RuntimeSettings]:
    """Each runtime's checked settings; InputError with the problems of all of them."""
    found: dict[str, RuntimeSettings] = {}
    problems: list[Problem] = []
    for name, plugin in runtimes.items():
        try:
            found[name] = settings(name, settings_class(plugin.implementation))
        except InputError as e:
            problems += e.problems
    if problems:
        raise InputError(problems)
    return found


_builtin: PluginSet | None = None


def builtin_set() -> PluginSet:
    """steepy's own runtimes with their default settings, and no other plugin (what an agent
    made without a configuration has)."""
    global _builtin
    if _builtin is None:
        _builtin = PluginSet(builtin_plugins())
    return _builtin
