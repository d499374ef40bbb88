"""The `steepy` command line.

Exit codes: 0 fine, 1 a workflow ran and failed, 2 bad input (nothing stored or run),
3 cancelled.
"""

from __future__ import annotations

import click

from steepy import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="steepy")
def main() -> None:
    """steepy: run scientific workflows of command-line tools (Steep-compatible)."""


# the commands register themselves on `main'
from steepy.cli import engine, files, manage, serve  # noqa: E402,F401
