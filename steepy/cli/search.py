"""`steepy search QUERY`: Steep's search over submissions and process chains (its query
language, as GET /search and the web UI's search box), from the local database or a server
(`--server URL`)."""

from __future__ import annotations

import click

from steepy.api.backends import Backend
from steepy.cli.manage import with_backend
from steepy.cli.output import print_json


def _fragment(match: dict) -> str:
    """The text around the match (at most 100 characters, Steep's rule), on one line."""
    return " ".join(match["fragment"].split())


def hit_line(hit: dict) -> str:
    """One line per hit: type, id, status, name, and where the query matched it."""
    name = f"  {hit['name']}" if hit.get("name") else ""
    where = "; ".join(f"{m['locator']}: {_fragment(m)}" for m in hit.get("matches", []))
    return f"{hit['type']:<12}  {hit['id']}  {hit['status']}{name}  ({where})"


@click.command()
@click.argument("query", nargs=-1, required=True)
@click.option("--size", default=20, show_default=True, type=click.IntRange(min=1),
              help="How many hits, best first.")
@click.option("--offset", default=0, type=click.IntRange(min=0),
              help="Hits to skip (the next page).")
@click.option("--json", "as_json", is_flag=True,
              help="GET /search's answer: `counts' per type and the `results'.")
@with_backend
def search(backend: Backend, query: tuple[str, ...], size: int, offset: int,
           as_json: bool) -> None:
    """Search submissions and process chains with Steep's query language: words, "exact
    phrases", filters like status:error, name:NAME, rc:CAPABILITY, start:>=2026-01-31, and
    is:workflow or is:processchain. The words of QUERY are joined by spaces. Dates are in
    this machine's time zone."""
    answer = backend.search(" ".join(query), size, offset)
    if as_json:
        print_json(answer)
        return
    results = answer.get("results", [])
    for hit in results:
        click.echo(hit_line(hit))
    if not results:
        click.echo("no hits", err=True)
    elif len(results) == size:  # perhaps more: the counts disregard is:workflow/processchain
        total = (answer.get("counts") or {}).get("total", 0)
        more = f"{total} in all; " if total > offset + size else ""
        click.echo(f"({more}--offset {offset + size} for more)", err=True)
