"""The `steepy` command line.

Exit codes: 0 fine, 1 a workflow ran and failed, 2 bad input (nothing stored or run),
3 cancelled, 4 the database cannot be used (full or read-only disk, server gone), 5 steepy
itself failed (a bug: the message says where).
"""

from __future__ import annotations

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


# the commands register themselves on `main'
from steepy.cli import engine, files, manage, plugins, serve  # noqa: E402,F401
