"""`steepy plan --resume`: which chains a submission with `--resume` would reuse, and why
each other one would run (steepy.engine.reuseplan). Reads the database; stores nothing."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from steepy.cli.common import checked_config, db_url, fail, open_registry_or_fail
from steepy.errors import Problem, SteepyError

if TYPE_CHECKING:
    from steepy.engine.reuseplan import Verdict
    from steepy.model import Macro, Service, Workflow


def plan_resumed(workflow_file: str, workflow: Workflow, services: dict[str, Service],
                 macros: dict[str, Macro], whole: bool, as_json: bool, db: str | None) -> None:
    from steepy.engine.reuse import CacheSettings, Reuse
    from steepy.engine.reuseplan import ReusePlan
    from steepy.generator import ProcessChainGenerator, absolute_folder, simulate

    config = checked_config()
    tmp, out = (f"{absolute_folder(config[k])}/PLAN" for k in ("tmpPath", "outPath"))
    registry = _registry(db)
    planned = ReusePlan(Reuse(registry.cache, services, CacheSettings(mode=config.cache.mode),
                              config["outPath"]))
    finished = None
    try:
        if whole:
            finished = simulate(workflow, services, macros, tmp, out,
                                feedback=planned.feedback).finished
        else:
            planned.step(ProcessChainGenerator(workflow, tmp, out, services, macros).generate())
    except SteepyError as e:
        fail([Problem(str(e), file=workflow_file)])
    finally:
        registry.close()
    if as_json:
        click.echo(json.dumps([[_verdict_json(v) for v in step] for step in planned.steps],
                              indent=2))
    else:
        _print(planned.steps)
    if finished is False:
        click.echo("The workflow would not finish: some action never gets its inputs.", err=True)


def _registry(db: str | None):
    """The database of `--db' (or the configuration's); none here yet: an empty one in
    memory, so that every chain would run (nothing is left behind), and a line on stderr
    saying so (a mistyped --db or another folder reuses nothing either)."""
    from steepy.registry import open_registry
    from steepy.registry.database import sqlite_file

    path = sqlite_file(db_url(db))
    if path is not None and not path.exists():
        click.echo(f"No database at {path.absolute()}: nothing can be reused, every chain "
                   "would run.", err=True)
        return open_registry("sqlite://")
    return open_registry_or_fail(db, create=False)


def _verdict_json(verdict: Verdict) -> dict:
    out = verdict.chain.to_json()
    if verdict.reused is not None:
        out["reused"] = verdict.reused.marker()
    else:
        out["runs"] = list(verdict.reasons)
    return out


def _print(steps: list[list[Verdict]]) -> None:
    total = reused = 0
    for number, step in enumerate(steps, 1):
        count = sum(v.reused is not None for v in step)
        total, reused = total + len(step), reused + count
        click.echo(click.style(f"step {number}: {len(step)} process chain(s), {count} reused",
                               bold=True))
        for v in step:
            if v.reused is not None:
                click.echo(f"  chain {v.chain.id}: reused (submission "
                           f"{v.reused.from_submission_id}, chain {v.reused.from_chain_id})")
            else:
                click.echo(f"  chain {v.chain.id}: runs: {'; '.join(v.reasons)}")
    click.echo(f"{total} chain{'s' if total != 1 else ''}: {total - reused} to run, "
               f"{reused} reused")
