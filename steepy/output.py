"""Terminal output: rich tables on a terminal, tab-separated lines when piped."""

from __future__ import annotations

import sys
from typing import Iterable, Sequence

import click


def table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> None:
    rows = [[("" if v is None else str(v)) for v in row] for row in rows]
    if not sys.stdout.isatty():
        click.echo("\t".join(headers))
        for row in rows:
            click.echo("\t".join(row))
        return
    from rich.console import Console
    from rich.table import Table

    t = Table(*headers, show_edge=False, header_style="bold")
    for row in rows:
        t.add_row(*row)
    Console().print(t)
