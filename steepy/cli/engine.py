"""Commands that run workflows in this process: run (one submission) and worker (all)."""

from __future__ import annotations

import logging
import sys

import click

from steepy.cli import output
from steepy.cli.ending import exit_quickly
from steepy.cli.logsetup import log_options
from steepy.cli.common import (AGENTS_OPTION, ENGINE_DB_OPTION, EXIT_CODES, MACROS_OPTION,
                               RESUME_OPTION, SERVICES_OPTION, engine_settings,
                               exit_if_engine_failed, given_vars, load_registries,
                               open_registry_or_fail, prepare, vars_options)

log = logging.getLogger(__name__)


async def nothing_left(views, idle) -> bool:
    """`worker --exit-when-idle`: no submission waits or runs, and the engine is `idle()`.
    In this order: a submission taken between the two reads is RUNNING at the second; one
    the engine took before the reads has its controller when `idle()` is asked."""
    from steepy.model.submission import SubmissionStatus as SS
    from steepy.registry.offload import call

    for status in (SS.ACCEPTED, SS.RUNNING):
        if await call(views.submission_ids, status):
            return False
    return idle()


def print_events(registry, submission_id: str, after: int) -> int:
    """Print the events after `after'; the id of the last one printed."""
    events = registry.views.events(submission_id, after)
    output.print_events(events)
    return events[-1]["id"] if events else after


async def _follow(registry, submission_id: str, done) -> None:
    """A live view on a terminal; piped, one line per event (until `done' is set). Both wait
    a database outage out and go on from where they stopped."""
    import asyncio

    if sys.stdout.isatty():
        from rich.console import Console

        from steepy.cli.live import live_view

        await live_view(registry, submission_id, Console(), done)
        return
    from steepy.cli.following import following

    seen = 0

    async def print_new(_final: bool) -> None:
        nonlocal seen
        seen = await asyncio.to_thread(print_events, registry, submission_id, seen)

    await following(f"timeline of submission {submission_id}", print_new, done, 0.2)


@click.command()
@click.argument("workflow_file", metavar="WORKFLOW", type=click.Path())
@SERVICES_OPTION
@MACROS_OPTION
@ENGINE_DB_OPTION
@AGENTS_OPTION
@vars_options
@click.option("--json", "as_json", is_flag=True, help="Print the final submission as JSON.")
@RESUME_OPTION
@log_options
def run(workflow_file: str, services, macros, db, agents, var_options, vars_files,
        as_json: bool, resume: bool | None) -> None:
    """Submit a workflow and run it to the end in this process."""
    import asyncio
    import signal

    from steepy.cli.collector import collect_less
    from steepy.engine.engine import Engine

    collect_less()
    settings = engine_settings(agents)  # checks the configuration first: exit 2, nothing stored
    submission, service_map, macro_map = prepare(workflow_file, services, macros,
                                                 given_vars(var_options, vars_files))
    submission.resume = resume
    registry = open_registry_or_fail(db)
    registry.requests.add_submission(submission)
    if not as_json:
        click.echo(f"submission {submission.id}")

    engine = Engine(registry, service_map, macro_map, settings, kind="run")
    engine.on_resumed = lambda resumed_id: click.echo(
        f"resuming submission {resumed_id} left by a dead engine", err=True)

    ctrl_c = _CtrlC(registry, submission.id, engine)

    async def main_loop() -> None:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, ctrl_c)
        loop.add_signal_handler(signal.SIGTERM, ctrl_c)
        follower = None
        done = asyncio.Event()
        if not as_json:
            follower = asyncio.create_task(_follow(registry, submission.id, done))
        try:
            # also what a killed `steepy run' left: resumed, and run to its end too
            await engine.run(until_submission=submission.id, resume_abandoned=True)
        finally:
            if follower is not None:
                done.set()
                if ctrl_c.stopped:  # (it would wait for the database to print the rest)
                    follower.cancel()
                await asyncio.gather(follower, return_exceptions=ctrl_c.stopped)

    asyncio.run(main_loop())
    exit_quickly()  # the engine has stopped: nothing is left that the teardown must finish
    exit_if_engine_failed(engine)
    if ctrl_c.stopped:
        from steepy.registry.failures import EXIT_DATABASE

        click.echo(f"steepy: stopped before submission {submission.id} ended", err=True)
        sys.exit(EXIT_DATABASE)
    try:
        final = _say_outcome(registry, submission.id, engine.resumed, as_json)
    finally:  # also when the reader went away (`| head`: click exits 1 quietly)
        registry.close()  # on SQLite: the WAL copied into the database file
    sys.exit(EXIT_CODES.get(str(final.status), 1))


class _CtrlC:
    """What Ctrl-C (or SIGTERM) does to `steepy run`: the first cancels its submission (tried
    each second until the database takes it; a task, not in the signal handler, which would
    block) and lets the engine finish it. Another one, once the database refused the cancel
    (not merely while it is under way: two Ctrl-C a millisecond apart, or a write lock held a
    moment, still cancel), stops the engine as a worker's SIGTERM does: `stopped`."""

    def __init__(self, registry, submission_id: str, engine) -> None:
        self.registry, self.submission_id, self.engine = registry, submission_id, engine
        self.cancelling: list = []  # the cancel's tasks (held: one nobody holds is collected)
        self.refused: list[BaseException] = []  # what the database answered the cancel
        self.stopped = False

    def __call__(self) -> None:
        import asyncio

        from steepy.api.cancelling import cancel_when_stored

        under_way = bool(self.cancelling) and not self.cancelling[-1].done()
        if under_way and self.refused:
            click.echo("stopping: the cancel could not be stored; the submission stays "
                       "RUNNING for the next engine (its running chains run again)", err=True)
            self.stopped = True
            self.engine.stop.set()
            return
        click.echo("cancelling ...", err=True)
        self.engine.finish_resumed = False  # those it resumed are given back, not cancelled
        if not under_way:
            self.cancelling.append(asyncio.create_task(cancel_when_stored(
                self.registry, self.submission_id, self.engine, self.refused)))


def _say_outcome(registry, submission_id: str, resumed: list[str], as_json: bool):
    """Print how `steepy run`'s submission ended (and those it resumed); its record."""
    final = registry.views.get_submission(submission_id)
    if as_json:
        from steepy.registry.documents import write_submission_document

        # written a page of chains at a time: 100,000 chains must not be one string
        write_submission_document(registry.views, submission_id, sys.stdout.write)
        sys.stdout.write("\n")
    else:  # as `steepy wait' prints it: the status, what was reused, what failed
        from steepy.api.local import LocalBackend
        from steepy.cli.outcome import print_outcome
        from steepy.cli.setup import CliSetup

        backend = LocalBackend(None, CliSetup(), registry)
        print_outcome(backend, backend.submission(submission_id))
    for resumed_id in resumed:  # their own statuses; the exit code is this one's
        record = registry.views.get_submission(resumed_id)
        click.echo(f"resumed submission {resumed_id}: {record.status}", err=True)
    return final


@click.command()
@SERVICES_OPTION
@MACROS_OPTION
@ENGINE_DB_OPTION
@AGENTS_OPTION
@click.option("--exit-when-idle", is_flag=True, help="Stop once nothing is left to do.")
@log_options
def worker(services, macros, db, agents, exit_when_idle: bool) -> None:
    """Run everything in the database until stopped (SIGTERM or Ctrl-C stop cleanly)."""
    import asyncio
    import signal

    from steepy.cli.collector import collect_less
    from steepy.engine.engine import Engine
    from steepy.registry.offload import call
    from steepy.registry.outage import in_rounds

    collect_less()
    settings = engine_settings(agents)  # checks the configuration first
    service_map, macro_map = load_registries(services, macros)
    registry = open_registry_or_fail(db)

    engine = Engine(registry, service_map, macro_map, settings)

    async def main_loop() -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, engine.stop.set)
        if exit_when_idle:
            async def look() -> float:  # a round: stop when idle and nothing is left to do
                if await nothing_left(registry.views, lambda: engine.idle):
                    engine.stop.set()
                return 0.2

            async def watch() -> None:  # a database outage is waited out: it ends no round
                try:
                    # (from when it takes work: what is left to do is then in the database)
                    await engine.ready.wait()
                    await in_rounds(f"idle check of worker {engine.owner}", look,
                                    asyncio.Event(), engine.stop, log)
                except Exception as e:  # a bug: the worker would otherwise never end
                    engine.crash(e)
            watching = asyncio.create_task(watch())  # noqa: F841 (held until the loop ends)
        click.echo(f"worker {engine.owner} with {engine.agent_count} agent(s)", err=True)
        await engine.run()

    asyncio.run(main_loop())
    exit_if_engine_failed(engine)
