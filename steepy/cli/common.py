"""What the commands share: services and macros, the database and the engine settings from
the configuration (read and checked by steepy.cli.setup, the API's setup wrapped)."""

from __future__ import annotations

import sys

import click

from steepy.cli.output import EXIT_INVALID, fail, stop, warn  # noqa: F401 (re-exported)
from steepy.cli.setup import (WHERE_SERVICES, CliSetup, checked_config,  # noqa: F401
                              checked_plugins)  # (re-exported)
from steepy.errors import InputError
from steepy.model.submission import SubmissionStatus as SS

EXIT_INTERNAL = 5  # steepy itself failed (a bug)
EXIT_CODES = {SS.SUCCESS: 0, SS.ERROR: 1, SS.PARTIAL_SUCCESS: 1, SS.CANCELLED: 3}

DB_OPTION = click.option("--db", help="Database URL (default: sqlite:///.steepy/steepy.db).")


def _no_secret(_ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """`--db' of a command that runs tools: without a password (in the URL, or libpq's
    `password' and `sslpassword'), which the process's command line would show to every tool
    it runs and every local user (`ps'). libpq's other keys (`passfile', `sslkey', ...) name
    files or modes: taken."""
    if value:
        from steepy.registry.failures import holds_password  # (SQLAlchemy: these use it)

        if holds_password(value):
            raise click.BadParameter(
                "the URL holds a password, which every tool this command runs and "
                "every local user could read on its command line (`ps'); give the URL in "
                "STEEPY_DB_URL or in db.url of steepy.yaml, or keep the password in libpq's "
                "~/.pgpass", param=param)
    return value


ENGINE_DB_OPTION = click.option(  # (run, worker, serve)
    "--db", callback=_no_secret,
    help="Database URL (default: sqlite:///.steepy/steepy.db). No password here: a command "
         "line is readable by the tools; use STEEPY_DB_URL.")
SERVICES_OPTION = click.option("--services", "-s", multiple=True,
                               help="Service metadata: file, folder or glob.")
MACROS_OPTION = click.option("--macros", "-m", multiple=True, help="Macros: file, folder or glob.")
AGENTS_OPTION = click.option("--agents", type=click.IntRange(min=0),
                             help="Local agents, i.e. chains run in parallel (default: the "
                                  "agent's instances in steepy.yaml, else one per core).")
NO_SERVICES = "No services were loaded: " + WHERE_SERVICES


def vars_options(command):
    """`--var name=value` and `--vars FILE`: values for the workflow's variables."""
    command = click.option("--vars", "vars_files", multiple=True, metavar="FILE",
                           type=click.Path(),
                           help="Values of workflow variables from a YAML file of "
                                "`name: value' pairs.")(command)
    return click.option("--var", "var_options", multiple=True, metavar="NAME=VALUE",
                        help="Set a workflow variable that has a default value (the value "
                             "is read as YAML: `--var 'sizes=[1, 2]''). Repeatable.")(command)


def given_vars(var_options: tuple[str, ...], vars_files: tuple[str, ...]):
    """The values of `--vars` files, then of `--var` options (the later wins); a malformed
    one is exit code 2."""
    from steepy.documents.variables import read_given

    try:
        return read_given(vars_files, var_options)
    except InputError as e:
        fail(e.problems)


def load_registries(services: tuple[str, ...], macros: tuple[str, ...]) -> tuple[dict, dict]:
    """The services and macros by id (steepy.api.setup.LocalSetup.definitions); a problem
    is exit code 2."""
    return CliSetup().definitions(services, macros)


def db_url(option: str | None) -> str | None:
    """`--db', else db.url of the configuration (checked there, with its file:line:column or
    variable: STEEPY_DB_URL is read as db.url); Steep's jdbc:postgresql://... is exit code 2."""
    return CliSetup().database_url(option)


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
    that does not exist is one line and exit code 2 instead of a new, empty database. A
    database that cannot be used raises DatabaseUnavailable (the command's own exit code)."""
    return CliSetup().open_registry(db, create=create)


def engine_settings(agents: int | None, config=None):
    """The engine's and its agents' settings from the (checked) configuration."""
    from steepy.engine.settings import settings_from_config

    config = checked_config() if config is None else config
    return settings_from_config(config, checked_plugins(), agents)


def gc_settings(config):
    from steepy.engine.housekeeping import GcSettings

    return GcSettings.from_config(config)


def prepare(workflow_file: str, services: tuple[str, ...], macros: tuple[str, ...],
            given=None):
    """Read and check a workflow (with the values `given` for its variables); exit 2 with
    every problem before anything is stored."""
    from steepy.documents.inputfiles import InputBase
    from steepy.documents.loading import read_file
    from steepy.documents.submissions import submission_from

    service_map, macro_map = load_registries(services, macros)
    try:
        submission = submission_from(read_file(workflow_file), service_map, macro_map,
                                     checked_plugins().runtimes(), given, InputBase.submitter())
    except InputError as e:
        fail(e.problems)
    return submission, service_map, macro_map


RESUME_OPTION = click.option(  # (run, submit: extensions 15)
    "--resume/--no-resume", default=None,
    help="Reuse the results of chains that earlier submissions ran with the same tools, "
         "arguments and input files (default: cache.enabled); --no-resume runs them all.")
