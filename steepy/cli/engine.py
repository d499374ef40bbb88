"""Commands that run workflows in this process: run (one submission) and worker (all)."""

from __future__ import annotations

import sys

import click

from steepy.cli import main
from steepy.cli.common import (AGENTS_OPTION, DB_OPTION, EXIT_CODES, MACROS_OPTION, SERVICES_OPTION,
                               engine_settings, load_registries, open_registry_or_fail, prepare)
from steepy.registry.documents import submission_document


def print_events(registry, submission_id: str, after: int) -> int:
    for e in registry.events(submission_id, after):
        after = e["id"]
        detail = " ".join(f"{k}={v}" for k, v in e.items() if k not in ("id", "time", "kind"))
        click.echo(f"{e['time']}  {e['kind']:<26} {detail}")
    return after



@main.command()
@click.argument("workflow_file", metavar="WORKFLOW", type=click.Path())
@SERVICES_OPTION
@MACROS_OPTION
@DB_OPTION
@AGENTS_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print the final submission as JSON.")
def run(workflow_file: str, services, macros, db, agents, as_json: bool) -> None:
    """Submit a workflow and run it to the end in this process."""
    import asyncio
    import json as jsonlib
    import signal

    from steepy.engine import Engine

    submission, service_map, macro_map = prepare(workflow_file, services, macros)
    registry = open_registry_or_fail(db)
    registry.add_submission(submission)
    if not as_json:
        click.echo(f"submission {submission.id}")

    async def main_loop() -> None:
        engine = Engine(registry, service_map, macro_map, engine_settings(agents))
        loop = asyncio.get_running_loop()

        def interrupt() -> None:  # Ctrl-C: cancel the submission, let the engine finish it
            click.echo("cancelling ...", err=True)
            registry.cancel_submission(submission.id)
            engine.scheduler.wake()

        loop.add_signal_handler(signal.SIGINT, interrupt)
        loop.add_signal_handler(signal.SIGTERM, interrupt)
        seen = [0]

        async def follow() -> None:
            while True:
                seen[0] = await asyncio.to_thread(print_events, registry, submission.id, seen[0])
                await asyncio.sleep(0.2)

        printer = None if as_json else asyncio.create_task(follow())
        try:
            await engine.run(until_submission=submission.id)
        finally:
            if printer is not None:
                printer.cancel()
                print_events(registry, submission.id, seen[0])  # the last lines

    asyncio.run(main_loop())
    final = registry.get_submission(submission.id)
    if as_json:
        click.echo(jsonlib.dumps(submission_document(registry, submission.id), indent=2))
    else:
        message = f" ({final.error_message})" if final.error_message else ""
        click.echo(f"submission {final.id}: {final.status}{message}")
    sys.exit(EXIT_CODES.get(str(final.status), 1))



@main.command()
@SERVICES_OPTION
@MACROS_OPTION
@DB_OPTION
@AGENTS_OPTION
@click.option("--exit-when-idle", is_flag=True, help="Stop once nothing is left to do.")
def worker(services, macros, db, agents, exit_when_idle: bool) -> None:
    """Run everything in the database until stopped (SIGTERM or Ctrl-C stop cleanly)."""
    import asyncio
    import signal

    from steepy.engine import Engine

    service_map, macro_map = load_registries(services, macros)
    registry = open_registry_or_fail(db)

    async def main_loop() -> None:
        engine = Engine(registry, service_map, macro_map, engine_settings(agents))
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, engine.stop.set)
        if exit_when_idle:
            async def watch() -> None:
                while not engine.stop.is_set():
                    await asyncio.sleep(0.5)
                    idle = not engine.controller.tasks and not engine.scheduler.busy
                    if idle and not any([await asyncio.to_thread(registry.submission_ids, status)
                                         for status in ("ACCEPTED", "RUNNING")]):
                        engine.stop.set()
            asyncio.create_task(watch())
        click.echo(f"worker {engine.owner} with {len(engine.agents)} agent(s)", err=True)
        await engine.run()

    asyncio.run(main_loop())
