"""`steepy slurm-workers N`: pilot workers as SLURM jobs (steepy.engine.pilots)."""

from __future__ import annotations

import os
import shlex

import click

from steepy.cli.common import DB_OPTION, MACROS_OPTION, SERVICES_OPTION, db_url, fail
from steepy.errors import Problem


@click.command(name="slurm-workers")
@click.argument("count", type=click.IntRange(1, 10_000))
@DB_OPTION
@SERVICES_OPTION
@MACROS_OPTION
@click.option("--agents", type=click.IntRange(1, 1024), default=1, show_default=True,
              help="Agents (and CPUs) per worker job.")
@click.option("--sbatch-args", default="", metavar="ARGS",
              help="More sbatch options, one string (e.g. \"-p long --mem 4G --time 8:00:00\").")
@click.option("--output", type=click.Path(file_okay=False), default=".", show_default=True,
              help="Folder for each job's output (steepy-worker-<job id>.out).")
def slurm_workers(count: int, db, services, macros, agents: int, sbatch_args: str,
                  output: str) -> None:
    """Submit COUNT SLURM jobs that each run `steepy worker --exit-when-idle` on the shared
    database: they run the chains of every submission there and end when nothing is left.
    The jobs run this Python, in this folder, with this environment (a shared filesystem)."""
    from steepy.engine.pilots import PilotError, Pilots

    url = db_url(db)
    if not url:
        fail([Problem("pilot workers need the shared database: --db URL, STEEPY_DB_URL or "
                      "db.url (PostgreSQL when several run)", file="--db")])
    if url.startswith("sqlite"):
        click.echo("steepy: a SQLite database is only shared by pilots on one machine with it; "
                   "use PostgreSQL for a cluster", err=True)
    try:
        extra = shlex.split(sbatch_args)
    except ValueError as e:
        fail([Problem(f"cannot split the sbatch options: {e}", file="--sbatch-args")])
    pilots = Pilots(count, url, agents, [os.path.abspath(s) for s in services],
                    [os.path.abspath(m) for m in macros], extra, os.path.abspath(output),
                    os.getcwd())
    try:
        ids = pilots.submit()
    except PilotError as e:
        click.echo(f"steepy: {e}", err=True)
        raise SystemExit(1)
    for job_id in ids:
        click.echo(job_id)
