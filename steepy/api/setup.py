"""What working on a local database needs from steepy.yaml: the configuration, the plugins,
the services and macros, the database and the engine's settings. The Python API reads them
here (`LocalSetup`: every problem is an `InputError`, warnings go to the `steepy` logger);
the command line wraps it (`steepy.cli.setup`: problems are printed, exit code 2).

`Setup` is what the local backend asks of either."""

from __future__ import annotations

import logging
import os
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence

from steepy.errors import InputError, Problem, SteepyError

if TYPE_CHECKING:
    from steepy.config import Config
    from steepy.documents.validation_services import Runtimes
    from steepy.engine.engine import EngineSettings
    from steepy.events.webhooks import Subscriber
    from steepy.plugins.pluginset import PluginSet
    from steepy.registry import Registry

log = logging.getLogger("steepy")

Paths = Sequence[str | os.PathLike]


class Setup(Protocol):
    def definitions(self, services: Paths, macros: Paths) -> tuple[dict, dict]:
        """The services and macros by id: from these files, folders or globs, else
        steepy.yaml's `services` and `macros`, else the default folders."""

    def runtimes(self) -> "Runtimes":
        """The runtimes the configured plugins offer (a workflow is checked against them)."""

    def open_registry(self, db: str | None, create: bool = True) -> "Registry":
        """The database at `db` (None: steepy.yaml's `db.url`, else .steepy/steepy.db); with
        `create` False, an SQLite file that does not exist is not made (an error)."""

    def log_settings(self) -> tuple[Path, int]:
        """Where the agents write the chains' logs: `logs.processChains.path` and its
        `groupByPrefix`."""


def configured(option: Paths, key: str, reader: Callable[..., dict], config: "Config") -> dict:
    """Services or macros (`key`) from `option`, else from the configuration, else from the
    default folder when it exists (it is optional)."""
    from steepy.config import DEFAULTS

    from steepy.documents.loading import template_context

    context = template_context(config.written)  # what their templates see
    if option:
        return reader([str(p) for p in option], context)
    spec = config.get(key)
    if not spec or (spec == DEFAULTS[key] and not Path(spec).exists()):
        return {}
    try:
        return reader(spec, context)
    except InputError as e:
        raise InputError([_at_key(config, key, spec, p) for p in e.problems]) from None


def _at_key(config: "Config", key: str, spec: Any, problem: Problem) -> Problem:
    """A file or folder named by `key' of the configuration that cannot be read: said at
    the key in steepy.yaml (or the variable), where the user wrote the wrong name."""
    entries = [spec] if isinstance(spec, str) else list(spec)
    if problem.line is not None or problem.file is None:
        return problem
    for index, entry in enumerate(entries):
        if Path(str(entry)) == Path(problem.file):
            where = key if isinstance(spec, str) else f"{key}[{index}]"
            return config.located(where, f"`{entry}': {problem.message}")
    return problem


class LocalSetup:
    """steepy.yaml (or Steep's steep.yaml) of the working directory and the STEEPY_*
    variables, read when first needed; `services` and `macros` (files, folders or globs)
    replace its `services` and `macros`."""

    db_option = "db"  # what a bad `db` is blamed on (the command line's: `--db`)

    def __init__(self, services: Paths | str | None = None, macros: Paths | str | None = None):
        self.services = paths_of(services)
        self.macros = paths_of(macros)

    @cached_property
    def config(self) -> "Config":
        return self.read_config()

    @cached_property
    def plugins(self) -> "PluginSet":
        return self.read_plugins()

    def read_config(self) -> "Config":
        """steepy.yaml read and checked (InputError with every problem), its warnings logged."""
        from steepy.config import load_config

        config = load_config()
        for warning in config.warnings:
            log.warning("%s", warning)
        return config

    def read_plugins(self) -> "PluginSet":
        """The plugins loaded and checked (InputError, a PluginError too), warnings logged."""
        from steepy.plugins.pluginset import load_plugins

        plugins = load_plugins(self.config)
        for warning in plugins.warnings:
            log.warning("%s", warning)
        return plugins

    def definitions(self, services: Paths = (), macros: Paths = ()) -> tuple[dict, dict]:
        found_services, found_macros, problems = self.loaded_definitions(services, macros)
        if problems:
            raise InputError(problems)
        return found_services, found_macros

    def loaded_definitions(self, services: Paths = (),
                           macros: Paths = ()) -> tuple[dict, dict, list[Problem]]:
        """The services and macros, and the problems of them: services or macros that cannot
        all be read are none (`steepy validate' goes on and checks its files)."""
        from steepy.documents.loading import read_macros, read_services

        problems: list[Problem] = []
        found: list[dict] = []
        for option, key, reader in ((services or self.services, "services", read_services),
                                    (macros or self.macros, "macros", read_macros)):
            try:
                found.append(configured(option, key, reader, self.config))
            except InputError as e:
                problems += e.problems
                found.append({})
        return found[0], found[1], problems

    def runtimes(self) -> "Runtimes":
        return self.plugins.runtimes()

    def database_url(self, db: str | None) -> str | None:
        """`db` checked (Steep's JDBC form is refused with the URL to write instead: an
        InputError blaming `db_option`), else steepy.yaml's `db.url` (checked there)."""
        if not db:
            return self.section("db").url
        from steepy.config.urls import database_url

        try:
            return database_url(db)
        except ValueError as e:
            raise InputError(Problem(str(e), file=self.db_option)) from None

    def open_registry(self, db: str | None, create: bool = True) -> "Registry":
        """The database; NotFound when `create` is False and its SQLite file does not exist
        (a command that only reads must not leave an empty database behind), InputError for
        a URL steepy cannot open; DatabaseUnavailable passes (not bad input)."""
        from steepy.api.errors import NotFound
        from steepy.registry import open_registry
        from steepy.registry.database import sqlite_file
        from steepy.registry.failures import DatabaseUnavailable

        url = self.database_url(db)
        path = sqlite_file(url)
        if not create and path is not None and not path.exists():
            raise NotFound(f"No database at {path.absolute()}: nothing was submitted from here.")
        webhooks = self.webhooks()
        try:
            return open_registry(url, webhooks)
        except DatabaseUnavailable:
            raise
        except SteepyError as e:  # e.g. not a database URL
            raise InputError(Problem(str(e), file=self.db_option if db else "db.url")) from None

    def log_settings(self) -> tuple[Path, int]:
        """(without the plugins or the engine: `steepy logs` reads a file)"""
        logs = self.section("logs").process_chains
        return Path(logs.path), logs.group_by_prefix

    def section(self, name: str) -> Any:
        """One group of the configuration (`db', `logs'): steepy.cli.setup.ReadingSetup reads
        only the groups it needs."""
        return getattr(self.config, name)

    def webhooks(self) -> Sequence["Subscriber"]:
        """Who is told of the events the registry writes (`notifications.webhooks')."""
        return self.config.notifications.subscribers()

    def engine_settings(self, agents: int | None = None) -> "EngineSettings":
        from steepy.engine.settings import settings_from_config

        return settings_from_config(self.config, self.plugins, agents)


def paths_of(value: Paths | str | None) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, (str, os.PathLike)):
        return (str(value),)
    return tuple(str(v) for v in value)
