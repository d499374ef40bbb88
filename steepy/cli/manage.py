"""Commands on the stored submissions: submit, list, show (also as status), logs, cancel,
retry, events."""

from __future__ import annotations

import sys

import click

from steepy.cli import main
from steepy.cli.common import (DB_OPTION, EXIT_INVALID, MACROS_OPTION, SERVICES_OPTION,
                               checked_config, engine_settings, open_registry_or_fail, prepare)
from steepy.cli.engine import print_events
from steepy.model.submission import ACTIVE_SUBMISSION, FINISHED_CHAIN, RETRYABLE_SUBMISSION

SERVER_OPTION = click.option("--server", envvar="STEEPY_SERVER", metavar="URL",
                             help="Talk to this steepy HTTP API instead of the database "
                                  "(or STEEPY_SERVER).")


def _remote(name: str, *args) -> None:
    from steepy.http import remote

    checked_config()  # http.token; a bad configuration is exit 2, not a traceback
    remote.run(getattr(remote, name), *args)


@main.command()
@click.argument("workflow_file", metavar="WORKFLOW", type=click.Path())
@SERVICES_OPTION
@MACROS_OPTION
@DB_OPTION
@SERVER_OPTION
def submit(workflow_file: str, services, macros, db, server) -> None:
    """Store a workflow as ACCEPTED; a `steepy worker' runs it. Prints the new id last."""
    checked_config()
    if server:
        return _remote("submit", server, workflow_file)
    submission, _, _ = prepare(workflow_file, services, macros)
    open_registry_or_fail(db).requests.add_submission(submission)
    click.echo(f"submitted {submission.id}")


@main.command(name="list")
@click.option("--status", help="Only submissions with this status.")
@click.option("--size", default=20, show_default=True)
@click.option("--offset", default=0)
@DB_OPTION
@SERVER_OPTION
def list_submissions(status, size: int, offset: int, db, server) -> None:
    """List submissions, newest first."""
    if server:
        return _remote("list_submissions", server, status, size, offset)
    from steepy.output import table

    registry = open_registry_or_fail(db)
    found, total = registry.views.list_submissions(status=status.upper() if status else None,
                                             size=size, offset=offset)
    rows = []
    for s in found:
        counts = registry.views.chain_counts(s.id)
        done = sum(counts.get(k, 0) for k in FINISHED_CHAIN)
        rows.append((s.id, s.status, s.name or "", f"{done}/{sum(counts.values())}",
                     s.start_time.isoformat(timespec="seconds") if s.start_time else "",
                     s.end_time.isoformat(timespec="seconds") if s.end_time else ""))
    table(["id", "status", "name", "chains done", "started", "ended"], rows)
    if total > offset + len(found):
        click.echo(f"({total} in all; --offset {offset + len(found)} for more)", err=True)


@main.command()
@click.argument("item_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help="One JSON object (its `status' is the item's).")
@DB_OPTION
@SERVER_OPTION
def show(item_id: str, as_json: bool, db, server) -> None:
    """Show a submission (with its chains) or a process chain (with runs and attempts)."""
    if server:
        return _remote("show", server, item_id, as_json)
    import json as jsonlib

    from steepy.registry.documents import chain_document, submission_document

    registry = open_registry_or_fail(db)
    if registry.views.get_submission(item_id) is not None:
        document = submission_document(registry.views, item_id)
    elif (record := registry.views.get_chain(item_id)) is not None:
        document = chain_document(registry.views, record)
    else:
        click.echo(f"No submission or process chain with the id `{item_id}'.", err=True)
        sys.exit(EXIT_INVALID)
    if as_json:
        click.echo(jsonlib.dumps(document, indent=2))
        return
    _print_document(document)


# `steepy status ID': inspecting a submission's or process chain's status is `show' by the
# name Steep's users look for; one command registered under both names
main.add_command(show, name="status")


def _print_document(doc: dict) -> None:
    from collections import Counter

    from steepy.output import table

    if "processChains" in doc:
        click.echo(f"submission {doc['id']}  {doc['status']}  {doc.get('name') or ''}")
        for key in ("startTime", "endTime", "errorMessage"):
            if doc.get(key):
                click.echo(f"  {key}: {doc[key]}")
        click.echo(f"  chains: {doc['totalProcessChains']} in all, {doc['succeededProcessChains']} "
                   f"succeeded, {doc['failedProcessChains']} failed, {doc['cancelledProcessChains']} "
                   f"cancelled, {doc['runningProcessChains']} running, {doc['pausedProcessChains']} paused")
        for var, values in (doc.get("results") or {}).items():
            click.echo(f"  result {var}: {', '.join(map(str, values))}")
        table(["chain", "status", "runs", "executables"],
              [(c["id"], c["status"], c["totalRuns"], " ".join(e["id"] for e in c["executables"]))
               for c in doc["processChains"]])
        blocked = Counter(c["waiting"] for c in doc["processChains"] if c.get("waiting"))
        for reason, count in sorted(blocked.items()):
            click.echo(f"  {count} process chain{'s' if count != 1 else ''} {reason}")
        return
    click.echo(f"process chain {doc['id']}  {doc['status']}  (submission {doc['submissionId']})")
    if doc.get("waiting"):
        click.echo(f"  {doc['waiting']}")
    for run in doc["runs"]:
        click.echo(f"  run {run['runNumber']}: {run.get('status', 'RUNNING')} on {run['agentId']} "
                   f"from {run['startTime']} to {run.get('endTime', '...')}")
        if run.get("errorMessage"):
            click.echo("    " + run["errorMessage"].replace("\n", "\n    "))
        for a in run["attempts"]:
            detail = a.get("timeoutKind") or (f"exit code {a['exitCode']}" if a["exitCode"] is not None else "")
            delay = f", next attempt after {a['delayMs']} ms" if a.get("delayMs") else ""
            click.echo(f"    {a['executableId']} attempt {a['attempt']}: {a['outcome']} {detail}{delay}")


@main.command()
@click.argument("chain_id")
@click.option("--run", "run_number", type=int, help="Run number (default: the latest).")
@click.option("--follow", "-f", is_flag=True, help="Keep printing new lines while the chain runs.")
@DB_OPTION
@SERVER_OPTION
def logs(chain_id: str, run_number: int | None, follow: bool, db, server) -> None:
    """Print the output of a process chain's run."""
    if server:
        return _remote("logs", server, chain_id, run_number, follow)
    import time

    from steepy.agent import log_path

    registry = open_registry_or_fail(db)
    record = registry.views.get_chain(chain_id)
    if record is None:
        click.echo(f"No process chain with the id `{chain_id}'.", err=True)
        sys.exit(EXIT_INVALID)
    runs = registry.views.runs(chain_id)
    if not runs:
        click.echo(f"Process chain `{chain_id}' has not run yet ({record.status}).", err=True)
        sys.exit(EXIT_INVALID)
    number = run_number or runs[-1].run_number
    settings = engine_settings(None)
    path = log_path(settings.agent.log_dir, chain_id, number, settings.agent.log_group_by_prefix)
    if not path.exists():
        click.echo(f"No log of run {number} of `{chain_id}' at {path}.", err=True)
        sys.exit(EXIT_INVALID)
    with open(path, "rb") as f:
        while True:
            chunk = f.read()
            if chunk:
                click.echo(chunk.decode("utf-8", "replace"), nl=False)
            elif not follow or registry.views.get_chain(chain_id).status.finished:
                break
            else:
                time.sleep(0.2)


@main.command()
@click.argument("item_id", metavar="ID")
@DB_OPTION
@SERVER_OPTION
def cancel(item_id: str, db, server) -> None:
    """Cancel a submission or a single process chain."""
    if server:
        return _remote("cancel", server, item_id)
    registry = open_registry_or_fail(db)
    before, running = registry.requests.cancel_submission(item_id)
    if before is None:
        before = registry.requests.cancel_chain(item_id)
        if before is None:
            click.echo(f"No submission or process chain with the id `{item_id}'.", err=True)
            sys.exit(EXIT_INVALID)
        click.echo(f"process chain {item_id}: cancel requested (was {before})")
        return
    if before not in ACTIVE_SUBMISSION:
        click.echo(f"Submission `{item_id}' has already finished ({before}); nothing to cancel.",
                   err=True)
        sys.exit(EXIT_INVALID)
    click.echo(f"submission {item_id}: cancel requested (was {before}; {len(running)} running "
               "chain(s) are being stopped)")


@main.command()
@click.argument("submission_id")
@DB_OPTION
@SERVER_OPTION
def retry(submission_id: str, db, server) -> None:
    """Run the failed and cancelled chains of a finished submission again."""
    if server:
        return _remote("retry", server, submission_id)
    registry = open_registry_or_fail(db)
    before = registry.requests.retry_submission(submission_id)
    if before is None:
        click.echo(f"No submission with the id `{submission_id}'.", err=True)
        sys.exit(EXIT_INVALID)
    if before not in RETRYABLE_SUBMISSION:
        click.echo(f"Submission `{submission_id}' is {before}; only ERROR, PARTIAL_SUCCESS and "
                   "CANCELLED submissions can be retried.", err=True)
        sys.exit(EXIT_INVALID)
    click.echo(f"submission {submission_id}: RUNNING again (was {before}); a worker picks it up")


@main.command(name="events")
@click.argument("submission_id")
@DB_OPTION
@SERVER_OPTION
def show_events(submission_id: str, db, server) -> None:
    """Print the timeline of a submission."""
    if server:
        return _remote("events", server, submission_id)
    registry = open_registry_or_fail(db)
    if registry.views.get_submission(submission_id) is None:
        click.echo(f"No submission with the id `{submission_id}'.", err=True)
        sys.exit(EXIT_INVALID)
    print_events(registry, submission_id, 0)
