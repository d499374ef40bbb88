"""What the commands share: services and macros, the database and
the engine settings from the configuration."""

from __future__ import annotations

import sys
from typing import Any

import click

from steepy.cli.output import (EXIT_INVALID, fail, hint_on_failure, stop,  # noqa: F401
                               warn)  # (re-exported)
from steepy.config import load_config
from steepy.errors import InputError, Problem
from steepy.documents.loading import read_file, read_macros, read_services
from steepy.model.submission import SubmissionStatus as SS

EXIT_INTERNAL = 5  # steepy itself failed (a bug)
EXIT_CODES = {SS.SUCCESS: 0, SS.ERROR: 1, SS.PARTIAL_SUCCESS: 1, SS.CANCELLED: 3}

DB_OPTION = click.option("--db", help="Database URL (default: sqlite:///.steepy/steepy.db).")
SERVICES_OPTION = click.option("--services", "-s", multiple=True,
                               help="Service metadata: file, folder or glob.")
MACROS_OPTION = click.option("--macros", "-m", multiple=True, help="Macros: file, folder or glob.")
AGENTS_OPTION = click.option("--agents", type=int,
                             help="Local agents, i.e. chains run in parallel (default: cores).")
WHERE_SERVICES = ("give `--services DIR' (a file, folder or glob), set `services' in "
                  "steepy.yaml (Steep's `steep.services'), or put service files in a "
                  "`services/' folder.")
NO_SERVICES = "No services were loaded: " + WHERE_SERVICES


def _registry(option: tuple[str, ...], key: str, reader) -> dict[str, Any]:
    """Services or macros from the options, else from steepy.yaml or the default folder."""
    from steepy.api.setup import configured

    return configured(option, key, reader, checked_config())


def load_registries(services: tuple[str, ...], macros: tuple[str, ...]) -> tuple[dict, dict]:
    problems: list[Problem] = []
    found: list[dict] = []
    for option, key, reader in ((services, "services", read_services), (macros, "macros", read_macros)):
        try:
            found.append(_registry(option, key, reader))
        except InputError as e:
            problems += e.problems
            found.append({})
    if not found[0] and not problems:
        hint_on_failure("To load services, " + WHERE_SERVICES)  # said if the command fails (its services are unknown)
    if problems:
        fail(problems)
    return found[0], found[1]


def db_url(option: str | None) -> str | None:
    """`--db', else db.url of the configuration (checked there, with its file:line:column or
    variable: STEEPY_DB_URL is read as db.url)."""
    if option:
        from steepy.config.values import database_url
        try:
            return database_url(option)
        except ValueError as e:  # e.g. Steep's jdbc:postgresql://...
            fail([Problem(str(e), file="--db")])
    return checked_config().get("db.url")


def exit_if_engine_failed(engine) -> None:
    """An engine that stopped by itself: its database could not be used (exit 4, the cause
    already said while it retried), or steepy failed (exit 5, logged with its traceback)."""
    failure = None if engine is None else engine.failure
    if failure is None:
        return
    from steepy.registry.failures import EXIT_DATABASE, describe, is_database_failure

    if is_database_failure(failure):
        click.echo(f"steepy: cannot use the {describe(failure)}", err=True)
        sys.exit(EXIT_DATABASE)
    click.echo(f"steepy: the engine stopped after an internal error: {failure!r}", err=True)
    sys.exit(EXIT_INTERNAL)


def open_registry_or_fail(db: str | None, create: bool = True):
    """The registry of `--db' (or the configuration's); with `create' False, an SQLite file
    that does not exist is one line and exit code 2 instead of a new, empty database."""
    from steepy.errors import SteepyError
    from steepy.registry import open_registry
    from steepy.registry.failures import DatabaseUnavailable

    url = db_url(db)
    if not create:
        stop_if_no_database(url)
    webhooks = [w.webhook() for w in checked_config().notifications.webhooks]
    try:
        return open_registry(url, webhooks)
    except DatabaseUnavailable:
        raise  # not bad input: the command says so with its own exit code
    except SteepyError as e:  # e.g. not a database URL
        fail([Problem(str(e), file="--db")])


def stop_if_no_database(url: str | None) -> None:
    """A command that only reads must not leave an empty database behind (in the wrong folder,
    say): no SQLite file there is bad input (exit 2, like an id that does not exist), not a
    database that cannot be used (4)."""
    from steepy.registry.database import sqlite_file

    path = sqlite_file(url)
    if path is not None and not path.exists():
        stop(f"No database at {path.absolute()}: nothing was submitted from here. Run this "
             "where you ran `steepy run' or `steepy submit', or give --db URL (STEEPY_DB_URL, "
             "db.url) or --server URL (STEEPY_SERVER).")


_CONFIG_KEY = "steepy.config"  # where a command keeps its checked configuration


def checked_config():
    """The configuration (steepy.config.Config), read and checked once per command: any
    problem stops it with exit code 2 before anything is stored or started; its warnings are
    printed once. Commands call this first."""
    context = click.get_current_context(silent=True)
    if context is not None and _CONFIG_KEY in context.meta:
        return context.meta[_CONFIG_KEY]
    try:
        config = load_config()
    except InputError as e:
        warn(getattr(e, "warnings", []))
        fail(e.problems + _plugin_problems(getattr(e, "partial", None)))
    warn(config.warnings)
    if context is not None:
        context.meta[_CONFIG_KEY] = config
    return config


def _plugin_problems(config) -> list[Problem]:
    """The problems of the plugins and of the runtimes' `runtimes.<name>' sections of a
    configuration that has problems of its own (`partial' of load_config's InputError; None:
    none), so that every problem comes out at once."""
    from steepy.plugins.pluginset import load_plugins

    if config is None:
        return []
    try:
        load_plugins(config)
    except InputError as e:  # a PluginError too
        return e.problems
    return []


_PLUGINS_KEY = "steepy.plugins"  # where a command keeps its loaded plugins


def checked_plugins():
    """The plugins (steepy.plugins.PluginSet: steepy's runtimes, the installed ones, steepy.yaml's)
    with each runtime's `runtimes.<name>' settings, loaded and checked once per command: a
    plugin that cannot be used or a bad setting stops it with exit code 2; its warnings are
    printed once. They become the process's (what `GET /plugins' shows)."""
    from steepy.plugins.pluginset import load_plugins, use

    context = click.get_current_context(silent=True)
    if context is not None and _PLUGINS_KEY in context.meta:
        return context.meta[_PLUGINS_KEY]
    config = checked_config()
    try:
        plugins = load_plugins(config)
    except InputError as e:  # one located line naming the plugin, or the bad settings
        fail(e.problems)
    warn(plugins.warnings)
    use(plugins)
    if context is not None:
        context.meta[_PLUGINS_KEY] = plugins
    return plugins


def engine_settings(agents: int | None, config=None):
    """The engine's and its agents' settings from the (checked) configuration."""
    from steepy.engine.settings import settings_from_config

    config = checked_config() if config is None else config
    return settings_from_config(config, checked_plugins(), agents)


def gc_settings(config):
    from steepy.engine.housekeeping import GcSettings

    return GcSettings.from_config(config)


def prepare(workflow_file: str, services: tuple[str, ...], macros: tuple[str, ...]):
    """Read and check a workflow; exit 2 with every problem before anything is stored."""
    from steepy.documents.submissions import submission_from

    service_map, macro_map = load_registries(services, macros)
    try:
        submission = submission_from(read_file(workflow_file), service_map, macro_map,
                                     checked_plugins().runtimes())
    except InputError as e:
        fail(e.problems)
    return submission, service_map, macro_map

