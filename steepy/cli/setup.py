"""The local backend's setup for the commands: the API's (steepy.api.setup.LocalSetup) over
steepy.yaml and the plugins read and checked once per command, its errors printed. A problem
is one `file:line:column: path: message' line each and exit code 2; no database where a
command only reads is one line and exit code 2 too."""

from __future__ import annotations

import re
from functools import cached_property
from typing import Any

import click

from steepy.api.errors import NotFound
from steepy.api.setup import LocalSetup, Paths
from steepy.cli.output import fail, hint_on_failure, stop, warn
from steepy.errors import InputError, Problem

WHERE_SERVICES = ("give `--services DIR' (a file, folder or glob), set `services' in "
                  "steepy.yaml (Steep's `steep.services'), or put service files in a "
                  "`services/' folder.")
WHERE_MACROS = ("give `--macros DIR' (a file, folder or glob), set `macros' in steepy.yaml "
                "(Steep's `steep.macros'), or put macro files in a `macros/' folder.")
RUN_WHERE = ("Run this where you ran `steepy run' or `steepy submit', or give --db URL "
             "(STEEPY_DB_URL, db.url) or --server URL (STEEPY_SERVER).")
# what steepy.documents.validation_services says of a service no metadata defines
_UNDEFINED_SERVICE = re.compile(r"\bService `[^']*'( of the fallback)? is not defined\.")


_UNDEFINED_MACRO = re.compile(r"\bMacro `[^']*' not found\.")


def undefined_service(problem: Problem) -> bool:
    """Whether the problem is a workflow naming a service that is not defined."""
    return _UNDEFINED_SERVICE.search(problem.message) is not None


def undefined_macro(problem: Problem) -> bool:
    """Whether the problem is a workflow (or macro) including a macro that is not defined."""
    return _UNDEFINED_MACRO.search(problem.message) is not None


class CliSetup(LocalSetup):
    """LocalSetup for one command: its configuration and plugins are the command's
    (`checked_config', `checked_plugins'); InputError is printed with exit code 2, NotFound
    (no database) too, with where to look instead."""

    db_option = "--db"

    def read_config(self):
        return checked_config()

    def read_plugins(self):
        return checked_plugins()

    def database_url(self, db: str | None) -> str | None:
        try:
            return super().database_url(db)
        except InputError as e:
            fail(e.problems)

    def definitions(self, services: Paths = (), macros: Paths = ()) -> tuple[dict, dict]:
        """The services and macros; with no services at all, a failure that names a service
        not defined says where services come from."""
        try:
            found = super().definitions(services, macros)
        except InputError as e:
            fail(e.problems)
        self.hint_where_definitions_come_from(*found)
        return found

    def hint_where_definitions_come_from(self, services: dict, macros: dict) -> None:
        """With no services (macros) at all, a failure that names a service (macro) not
        defined says where they come from."""
        if not services:
            hint_on_failure("To load services, " + WHERE_SERVICES, about=undefined_service)
        if not macros:
            hint_on_failure("To load macros, " + WHERE_MACROS, about=undefined_macro)

    def open_registry(self, db: str | None, create: bool = True):
        try:
            return super().open_registry(db, create=create)
        except NotFound as e:  # a command that only reads, and no database file
            stop(f"{e} {RUN_WHERE}")
        except InputError as e:  # a URL steepy cannot open
            fail(e.problems)


class ReadingSetup(CliSetup):
    """CliSetup for the commands that only read the database (list, show, status, logs,
    events, wait): of the configuration they read and check `db' and `logs' alone
    (steepy.config.storage_plain: plain values without pydantic; a problem there is exit
    code 2 as ever), not the other keys nor the plugins, and open the registry without
    webhooks (they write no events): an SQLite file through Python's own sqlite3 where it
    can (steepy.registry.quick: no SQLAlchemy imported; not `quick': for a command that
    reads on, as `wait' does), else as ever."""

    def __init__(self, quick: bool = True):
        super().__init__()
        self.quick = quick

    def open_registry(self, db: str | None, create: bool = True):
        from steepy.registry import DEFAULT_URL
        from steepy.registry.quick import quick_registry

        try:
            url = None if create or not self.quick else self.database_url(db) or DEFAULT_URL
        except InputError:  # (said by the way below)
            url = None
        found = None if url is None else quick_registry(url)
        return found if found is not None else super().open_registry(db, create=create)

    def section(self, name: str) -> Any:
        sections = self._sections
        return sections[name] if name in sections else super().section(name)

    @cached_property
    def _sections(self) -> dict[str, Any]:
        from steepy.config.storage_plain import plain_storage

        try:
            sections = plain_storage()  # the groups db and logs, when plain
            if sections is None:  # values that pydantic checks (and locates their problems)
                from steepy.config.storage import load_sections

                sections = load_sections()
            return sections
        except InputError as e:
            fail(e.problems)

    def webhooks(self) -> tuple:
        return ()


_CONFIG_KEY = "steepy.config"  # where a command keeps its checked configuration


def checked_config():
    """The configuration (steepy.config.Config), read and checked once per command: any
    problem stops it with exit code 2 before anything is stored or started; its warnings are
    printed once. Commands call this first."""
    context = click.get_current_context(silent=True)
    if context is not None and _CONFIG_KEY in context.meta:
        return context.meta[_CONFIG_KEY]
    from steepy.config import load_config

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
