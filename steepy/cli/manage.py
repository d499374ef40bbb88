"""Commands on the stored submissions: submit, list, show (also as status), logs, cancel,
retry, events. One set of commands over two backends (steepy/cli/backends): the local
database, or a steepy server with `--server URL' (STEEPY_SERVER); the output and exit codes
are the same."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import click

from steepy.cli.backends import Backend
from steepy.cli.common import DB_OPTION, MACROS_OPTION, SERVICES_OPTION, checked_config
from steepy.cli.group import main
from steepy.cli.output import (fail, print_document, print_events, print_json,
                               print_submissions, stop)
from steepy.errors import InputError
from steepy.model.submission import FINISHED_CHAIN, SubmissionStatus

SERVER_OPTION = click.option("--server", envvar="STEEPY_SERVER", metavar="URL",
                             help="Talk to this steepy HTTP API instead of the database "
                                  "(or STEEPY_SERVER).")


@contextmanager
def open_backend(db: str | None, server: str | None) -> Iterator[Backend]:
    """The remote backend when `server' is given, else the local database's. A server that
    cannot be reached or refuses a request is one line and exit code 2."""
    if not server:
        from steepy.cli.backends.local import LocalBackend

        yield LocalBackend(db)
        return
    from steepy.cli.backends.remote import RemoteBackend
    from steepy.http.client import ClientError

    checked_config()  # http.token; a bad configuration is exit 2, not a traceback
    try:
        with RemoteBackend(server) as backend:
            yield backend
    except ClientError as e:
        stop(str(e))


@main.command()
@click.argument("workflow_file", metavar="WORKFLOW", type=click.Path())
@SERVICES_OPTION
@MACROS_OPTION
@DB_OPTION
@SERVER_OPTION
def submit(workflow_file: str, services, macros, db, server) -> None:
    """Store a workflow as ACCEPTED; a `steepy worker' runs it. Prints the new id last."""
    checked_config()
    with open_backend(db, server) as backend:
        try:
            submission_id = backend.submit(workflow_file, services, macros)
        except InputError as e:
            fail(e.problems)
    click.echo(f"submitted {submission_id}")


@main.command(name="list")
@click.option("--status", type=click.Choice([str(s) for s in SubmissionStatus], case_sensitive=False),
              help="Only submissions with this status.")
@click.option("--size", default=20, show_default=True)
@click.option("--offset", default=0)
@DB_OPTION
@SERVER_OPTION
def list_submissions(status, size: int, offset: int, db, server) -> None:
    """List submissions, newest first."""
    with open_backend(db, server) as backend:
        found, total = backend.submissions(str(status) if status else None, size, offset)
    print_submissions(found, total, offset)


@main.command()
@click.argument("item_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help="One JSON object (its `status' is the item's).")
@DB_OPTION
@SERVER_OPTION
def show(item_id: str, as_json: bool, db, server) -> None:
    """Show a submission (with its chains) or a process chain (with runs and attempts)."""
    with open_backend(db, server) as backend:
        document = backend.document(item_id)
    if document is None:
        stop(f"No submission or process chain with the id `{item_id}'.")
    if as_json:
        print_json(document)
    else:
        print_document(document)


# `steepy status ID': inspecting a submission's or process chain's status is `show' by the
# name Steep's users look for; one command registered under both names
main.add_command(show, name="status")


@main.command()
@click.argument("chain_id")
@click.option("--run", "run_number", type=int, help="Run number (default: the latest).")
@click.option("--follow", "-f", is_flag=True, help="Keep printing new lines while the chain runs.")
@DB_OPTION
@SERVER_OPTION
def logs(chain_id: str, run_number: int | None, follow: bool, db, server) -> None:
    """Print the output of a process chain's run."""
    import time

    with open_backend(db, server) as backend:
        chain = backend.chain(chain_id)
        if chain is None:
            stop(f"No process chain with the id `{chain_id}'.")
        if chain.latest_run is None:
            stop(f"Process chain `{chain_id}' has not run yet ({chain.status}).")
        number = run_number or chain.latest_run
        offset = 0
        while True:
            chunk = backend.log(chain_id, number, offset)
            if chunk is None:
                stop(f"No log of run {number} of `{chain_id}' "
                     f"{backend.log_place(chain_id, number)}.")
            if chunk:
                offset += len(chunk)
                click.echo(chunk.decode("utf-8", "replace"), nl=False)
                continue
            if not follow:
                break
            now = backend.chain(chain_id)
            if now is None or now.status in FINISHED_CHAIN:
                break
            time.sleep(0.2)


@main.command()
@click.argument("item_id", metavar="ID")
@DB_OPTION
@SERVER_OPTION
def cancel(item_id: str, db, server) -> None:
    """Cancel a submission or a single process chain."""
    with open_backend(db, server) as backend:
        answer = backend.cancel(item_id)
    if answer is None:
        stop(f"No submission or process chain with the id `{item_id}'.")
    if answer.kind != "submission":
        click.echo(f"process chain {item_id}: cancel requested (was {answer.before})")
    elif not answer.done:
        stop(f"Submission `{item_id}' has already finished ({answer.before}); nothing to cancel.")
    else:
        click.echo(f"submission {item_id}: cancel requested (was {answer.before}; "
                   f"{answer.running} running chain(s) are being stopped)")


@main.command()
@click.argument("submission_id")
@DB_OPTION
@SERVER_OPTION
def retry(submission_id: str, db, server) -> None:
    """Run the failed and cancelled chains of a finished submission again."""
    with open_backend(db, server) as backend:
        answer = backend.retry(submission_id)
    if answer is None:
        stop(f"No submission with the id `{submission_id}'.")
    if not answer.done:
        stop(f"Submission `{submission_id}' is {answer.before}; only ERROR, PARTIAL_SUCCESS and "
             "CANCELLED submissions can be retried.")
    click.echo(f"submission {submission_id}: RUNNING again (was {answer.before}); "
               "a worker picks it up")


@main.command(name="events")
@click.argument("submission_id")
@DB_OPTION
@SERVER_OPTION
def show_events(submission_id: str, db, server) -> None:
    """Print the timeline of a submission."""
    with open_backend(db, server) as backend:
        found = backend.events(submission_id)
    if found is None:
        stop(f"No submission with the id `{submission_id}'.")
    print_events(found)
