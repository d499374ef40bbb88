"""The plugins of one steepy process: loaded with the configuration, and the process's set.

    plugins = load_plugins(config)   # steepy's runtimes + entry points + steepy.yaml's, checked,
                                     # each runtime with its checked `runtimes.<name>' settings

`active()` is the process's set: the one `use()`d by the command that read the configuration
(every command that loads plugins), else steepy's runtimes and the installed ones with their
default settings. Only what shows plugins asks it (`GET /plugins', the web UI, a request's
runtimes): checking a workflow takes the runtimes as a parameter.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol, TypeVar

from steepy.errors import InputError, Problem
from steepy.plugins.loaded import PluginSet, builtin_set
from steepy.plugins.loading import (Declarations, Plugin, PluginError, builtin_plugins,
                                    declared_plugins, entry_point_plugins)
from steepy.runtimes.seam import RuntimeSettings

__all__ = ["PluginError", "PluginSet", "load_plugins", "active", "use", "builtin_set", "serving"]

log = logging.getLogger(__name__)

S = TypeVar("S", bound=RuntimeSettings)


class PluginConfig(Declarations, Protocol):
    """What loading plugins reads of the configuration (`steepy.config.Config' is one)."""

    def runtime_settings(self, runtime: str, model: type[S]) -> S: ...

    def runtime_setting_problems(self, runtimes: list[str]) -> list[Problem]: ...

    @property
    def retries(self) -> Any: ...  # `retries': has site() -> SiteRetries


def load_plugins(config: PluginConfig | None = None) -> PluginSet:
    """steepy's runtimes, the installed plugins and (with `config') steepy.yaml's, checked;
    PluginError for the first one that cannot be used, InputError with every problem of the
    runtimes' `runtimes.<name>' settings (located in steepy.yaml or the variables)."""
    plugins = builtin_plugins() + entry_point_plugins()
    places: dict[int, Problem] = {}
    if config is not None:
        declared = declared_plugins(config)
        places = {id(p): config.plugin_place(i) for i, p in enumerate(declared)}
        plugins += declared

    def place(plugin: Plugin) -> Problem:
        return places.get(id(plugin)) or Problem("", file=f"{plugin.origin} {plugin.object}")

    found = PluginSet(plugins, place, None if config is None else config.runtime_settings)
    if config is not None:  # e.g. a typing error in `runtimes.slrum.partition'
        found.warnings = config.runtime_setting_problems(found.runtime_names())
        found.retries = config.retries.site()  # its executables' default and limits
    return found


_active: PluginSet | None = None


def use(plugins: PluginSet) -> None:
    """Make `plugins' the process's set (the command that read the configuration does)."""
    global _active
    _active = plugins


def active() -> PluginSet:
    global _active
    if _active is None:
        try:
            _active = load_plugins()
        except InputError as e:  # an installed plugin that cannot be used: the commands say so
            log.warning("plugins: %s", e)
            _active = builtin_set()
    return _active


def serving(engine: Any | None) -> PluginSet:
    """The plugins a server shows (`GET /plugins', the web UI): its engine's, else (an
    API-only server) the process's."""
    return engine.plugins if engine is not None else active()
