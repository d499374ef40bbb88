"""The `steepy` command group, on which every command module registers its commands."""

from __future__ import annotations

import atexit
import os
import sys

import click

from steepy import __version__


class _Steepy(click.Group):
    """Every command: a database that cannot be used is one line and exit code 4."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except Exception as e:
            if "sqlalchemy" not in sys.modules and not type(e).__module__.startswith("steepy"):
                raise
            from steepy.registry.failures import EXIT_DATABASE, describe, is_database_failure

            if not is_database_failure(e):
                raise
            click.echo(f"steepy: cannot use the {describe(e)}", err=True)
            sys.exit(EXIT_DATABASE)


@click.group(cls=_Steepy, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="steepy")
def main() -> None:
    """steepy: run scientific workflows of command-line tools (Steep-compatible)."""


_quick_exit = False


def exit_quickly() -> None:
    """Let this process end without the interpreter's teardown once its command returns.

    A command asks for it when all it did is finished and stored: the engine of `steepy run`
    has stopped, drained its writers and closed its database connections. The teardown then
    only frees objects one by one (0.3-0.5 s after 1,000 chains, a twentieth of the run),
    which nobody needs. The atexit handlers still run (logging
    flushes there), and stdout and stderr are flushed."""
    global _quick_exit
    _quick_exit = True


def entry() -> None:
    """The `steepy` program (console script and `python -m steepy.cli`): `main`, then the end
    of the process, quickly where the command asked for it (`exit_quickly`). Tests that run
    `main` in their own process (click's CliRunner) never come here."""
    try:
        main()
    except SystemExit as e:
        if not _quick_exit:
            raise
        code = e.code
    else:  # main() always raises SystemExit; this is for safety's sake
        code = 0
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    atexit._run_exitfuncs()  # what the interpreter does first at exit (CPython, since 3.0)
    try:
        sys.stdout.flush()
    except OSError:  # the reader went away (a closed pipe): as Python itself would say
        code = code or 120
    try:
        sys.stderr.flush()
    except OSError:
        pass
    os._exit(code or 0)
