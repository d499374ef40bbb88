"""`steepy schedule add|list|show|pause|resume|remove`: recurring submissions (extensions
13), over the same backends as the other management commands (the local database, or a
server with `--server URL'). A `steepy worker' or `steepy serve' fires them; `steepy gc'
runs the garbage collector once."""

from __future__ import annotations

import click

from steepy.api.backends import Backend
from steepy.cli.common import (DB_OPTION, MACROS_OPTION, SERVICES_OPTION, checked_config,
                               given_vars, vars_options)
from steepy.cli.manage import found, with_backend
from steepy.cli.output import fail, print_given_vars, print_json, stop
from steepy.errors import InputError, Problem


def _when(text: str | None, zone: str | None = None) -> str:
    """An API time (UTC, `...Z') in the schedule's time zone, with the zone's name:
    `2025-03-01 03:00:00 Europe/Berlin'."""
    from datetime import datetime
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if not text:
        return "-"
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    try:
        tz = ZoneInfo(zone or "UTC")
    except (ZoneInfoNotFoundError, ValueError):  # a zone this machine does not know
        tz, zone = ZoneInfo("UTC"), "UTC"
    return f"{moment.astimezone(tz).strftime('%Y-%m-%d %H:%M:%S')} {zone or 'UTC'}"


def _trigger(schedule: dict) -> str:
    what = f"cron {schedule['cron']}" if "cron" in schedule else f"every {schedule['every']}"
    return f"{what} ({schedule['timezone']})"


def _line(schedule: dict) -> str:
    zone = schedule.get("timezone")
    state = ("paused" if schedule["paused"]
             else f"next {_when(schedule.get('nextFireTime'), zone)}")
    return f"{schedule['id']}  {schedule['name']}: {_trigger(schedule)}, {state}"


@click.group()
def schedule() -> None:
    """Submit a workflow again and again: on a cron expression or at an interval."""


@schedule.command()
@click.argument("workflow_file", metavar="WORKFLOW", type=click.Path())
@click.option("--cron", metavar="EXPR",
              help="A crontab line: minute hour day-of-month month day-of-week "
                   "(0 and 7 are Sunday), e.g. '0 3 * * 1-5', or '@daily'.")
@click.option("--every", metavar="DURATION", help="An interval, e.g. 30s, 15m, 1h (at least 1s).")
@click.option("--name", help="The name of the schedule and its submissions, at most 200 "
                             "characters (default: the workflow's name).")
@click.option("--timezone", metavar="TZ", help="The cron expression's time zone (default: UTC).")
@SERVICES_OPTION
@MACROS_OPTION
@vars_options
@with_backend
def add(backend: Backend, workflow_file: str, cron, every, name, timezone, services,
        macros, var_options, vars_files) -> None:
    """Check a workflow like `steepy submit' (with --var and --vars: for every submission of
    the schedule) and store it with its schedule. Prints the new schedule's id first."""
    from steepy.documents.values import unusable
    from steepy.model.common import utcnow
    from steepy.model.schedule import name_problem
    from steepy.model.triggers import parse_trigger

    checked_config()
    given_texts = {"--name": name, "--cron": cron, "--every": every, "--timezone": timezone}
    problems = [Problem(why, file=option) for option, text in given_texts.items()
                if text is not None and (why := unusable(text))]  # (bytes no UTF-8 has)
    if problems:
        fail(problems)
    problems = [Problem(m, file="--name") for m in [name_problem(name)] if m]
    try:  # here too: a server's answer would name its request's fields, not the options
        parse_trigger(cron, every, timezone, utcnow())
    except InputError as e:
        problems += e.problems
    if problems:
        fail(problems)
    given = given_vars(var_options, vars_files)
    try:
        added = backend.add_schedule(workflow_file, services, macros, cron, every, name,
                                     timezone, given)
    except InputError as e:
        fail(e.problems)
    click.echo(_line(added))


@schedule.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="A JSON list.")
@with_backend
def list_schedules(backend: Backend, as_json: bool) -> None:
    """Every schedule, oldest first."""
    found_all = backend.schedules()
    if as_json:
        print_json(found_all)
        return
    if not found_all:
        click.echo("no schedules")
    for item in found_all:
        last = item.get("lastSubmissionId")
        when = _when(item.get("lastFireTime"), item.get("timezone"))
        click.echo(_line(item) + (f", last {when} ({last})" if last else ""))


@schedule.command()
@click.argument("schedule_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help="One JSON object.")
@with_backend
def show(backend: Backend, schedule_id: str, as_json: bool) -> None:
    """A schedule and what its latest due times became."""
    item = found(backend.schedule(schedule_id), "schedule", schedule_id)
    if as_json:
        print_json(item)
        return
    click.echo(_line(item))
    print_given_vars(item.get("vars"))
    zone = item.get("timezone")
    for firing in item.get("firings", []):
        due = _when(firing["dueTime"], zone)
        if firing["outcome"] == "fired":
            extra = f" ({firing['count']} due times coalesced)" if firing["count"] > 1 else ""
            click.echo(f"  {due}  fired {firing['submissionId']}{extra}")
        else:
            from steepy.model.triggers import SKIPS_COUNTED

            count = firing["count"]
            counted = f"{count:,} or more" if count >= SKIPS_COUNTED else str(count)
            click.echo(f"  {due}  skipped {counted} due time(s) up to "
                       f"{_when(firing.get('lastDueTime'), zone)} (older than the grace period)")


def _pause(backend: Backend, schedule_id: str, paused: bool) -> None:
    item = found(backend.pause_schedule(schedule_id, paused), "schedule", schedule_id)
    click.echo(_line(item))


@schedule.command()
@click.argument("schedule_id", metavar="ID")
@with_backend
def pause(backend: Backend, schedule_id: str) -> None:
    """Stop firing a schedule until it is resumed."""
    _pause(backend, schedule_id, True)


@schedule.command()
@click.argument("schedule_id", metavar="ID")
@with_backend
def resume(backend: Backend, schedule_id: str) -> None:
    """Fire a paused schedule again, from now on (missed times are not caught up)."""
    _pause(backend, schedule_id, False)


@schedule.command()
@click.argument("schedule_id", metavar="ID")
@with_backend
def remove(backend: Backend, schedule_id: str) -> None:
    """Remove a schedule; the submissions it made stay."""
    if not backend.remove_schedule(schedule_id):
        stop(f"No schedule with the id `{schedule_id}'.")
    click.echo(f"removed schedule {schedule_id}")


@click.command()
@click.option("--dry-run", is_flag=True, help="Only count what would be deleted.")
@DB_OPTION
def gc(db: str | None, dry_run: bool) -> None:
    """Run the garbage collector once: delete submissions that finished before now -
    garbageCollector.retention.submissions, with their chains, runs, attempts, events, logs
    and temporary outputs (results in outPath only with garbageCollector.retention.results)."""
    from steepy.cli.common import gc_settings, open_registry_or_fail
    from steepy.engine.housekeeping import collect_garbage

    config = checked_config()
    settings = gc_settings(config)
    if settings.retention_submissions_ms is None and settings.retention_results_ms is None:
        stop("garbageCollector.retention.submissions is not set: nothing would be deleted "
             "(set it, e.g. to 30d, in steepy.yaml or STEEPY_GARBAGECOLLECTOR_RETENTION_"
             "SUBMISSIONS).")
    registry = open_registry_or_fail(db, create=False)  # nothing to collect in no database
    click.echo(collect_garbage(registry, settings, dry_run=dry_run).summary())
