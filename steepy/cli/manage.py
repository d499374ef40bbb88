"""Commands on the stored submissions: submit, list, show (also as status), logs, cancel,
retry, events. One set of commands over two backends (steepy/api/backends.py): the local
database, or a steepy server with `--server URL' (STEEPY_SERVER); the output and exit codes
are the same."""

from __future__ import annotations

import functools
import sys
from contextlib import contextmanager
from typing import Any, Callable, Iterator, NoReturn, TypeVar

import click

from steepy.api.backends import Backend, ChainState
from steepy.cli.common import (DB_OPTION, MACROS_OPTION, RESUME_OPTION, SERVICES_OPTION,
                               checked_config, given_vars, vars_options)
from steepy.cli.ending import exit_quickly
from steepy.cli.waiting import JSON_END_OPTION, WAIT_OPTION, print_document_line, wait_for
from steepy.cli.output import (fail, print_document, print_events, print_json,
                               print_submissions, print_unowned, stop)
from steepy.errors import InputError
from steepy.model.submission import FINISHED_CHAIN, SubmissionStatus, priority_refused

T = TypeVar("T")
SERVER_OPTION = click.option("--server", envvar="STEEPY_SERVER", metavar="URL",
                             help="Talk to this steepy HTTP API instead of the database "
                                  "(or STEEPY_SERVER).")


@contextmanager
def open_backend(db: str | None, server: str | None, reads_only: bool = False,
                 lasting: bool = False) -> Iterator[Backend]:
    """The remote backend when `server' is given, else the local database's (`reads_only':
    with the light setup of steepy.cli.setup.ReadingSetup; `lasting': for a command that
    reads on, which must notice the database's file deleted or replaced). A server that
    refuses a request is one line and exit code 2; one that cannot be reached, exit code 4
    (as a database that cannot be used: docs/reference/exit-codes.md)."""
    if not server:
        from steepy.api.local import LocalBackend
        from steepy.cli.setup import CliSetup, ReadingSetup

        backend = LocalBackend(db, ReadingSetup(quick=not lasting) if reads_only else CliSetup())
        yield backend
        if reads_only:  # read and printed: the process ends without the interpreter's
            backend.release()  # teardown (0.05 s of freeing SQLAlchemy's and steepy's modules)
            exit_quickly()
        return
    from steepy.api.remote import RemoteBackend
    from steepy.http.client import ClientError, Unreachable
    from steepy.registry.failures import EXIT_DATABASE

    checked_config()  # http.token; a bad configuration is exit 2, not a traceback
    try:
        with RemoteBackend(server) as backend:
            yield backend
    except Unreachable as e:
        click.echo(str(e), err=True)
        sys.exit(EXIT_DATABASE)
    except ClientError as e:
        stop(str(e))


LATEST = "last"  # where a command takes an id: the newest submission's
_ID_ARGUMENTS = ("item_id", "submission_id", "chain_id")


def with_backend(command: Callable[..., None], reads_only: bool = False,
                 lasting: Callable[[dict], bool] = lambda _: False) -> Callable[..., None]:
    """The `--db' and `--server' options; the command gets the open backend instead, and
    `last' for an id is the newest submission's (`lasting': whether the command, with these
    options, reads on until something happens)."""
    @functools.wraps(command)
    def run(db: str | None, server: str | None, **options: Any) -> None:
        with open_backend(db, server, reads_only, lasting(options)) as backend:
            command(backend, **_latest_named(backend, options))

    return DB_OPTION(SERVER_OPTION(run))


def _latest_named(backend: Backend, options: dict[str, Any]) -> dict[str, Any]:
    """`options' with `last' given for an id replaced by the newest submission's id (one
    line and exit code 2 when there is none)."""
    given = [options.get(k) for k in _ID_ARGUMENTS] + list(options.get("submission_ids", ()))
    if LATEST not in given:
        return options
    page, _ = backend.submissions(None, 1, 0)
    if not page:
        stop(f"No submission yet: `{LATEST}' names the newest one.")
    newest = page[0]["id"]
    named = {k: newest if k in _ID_ARGUMENTS and v == LATEST else v for k, v in options.items()}
    if "submission_ids" in options:
        named["submission_ids"] = tuple(newest if i == LATEST else i
                                        for i in options["submission_ids"])
    return named


def with_reading_backend(command: Callable[..., None],
                         lasting: Callable[[dict], bool] = lambda _: False
                         ) -> Callable[..., None]:
    """with_backend for a command that only reads: of the configuration, `db' and `logs'
    alone are read and checked, and the process ends without its teardown (issue 31: such
    a command starts and ends quickly). One that reads on (`lasting') opens the database as
    the engines do, which notice its file deleted or put back (steepy.registry.identity);
    the others read an SQLite file once, through steepy.registry.quick."""
    return with_backend(command, reads_only=True, lasting=lasting)


def found(answer: T | None, what: str, item_id: str) -> T:
    """The backend's answer; None (no such item) is one line and exit code 2."""
    if answer is None:
        stop(f"No {what} with the id `{item_id}'.")
    return answer


def not_a_chain(item_id: str, document: dict | None) -> None:
    """For a command that takes a submission: a process chain's id (its `document') given
    instead is one line naming its submission, and exit code 2."""
    if document is not None and "processChains" not in document:
        stop(f"`{item_id}' is a process chain, not a submission; its submission is "
             f"{document.get('submissionId')}.")


@click.command()
@click.argument("workflow_file", metavar="WORKFLOW", type=click.Path())
@SERVICES_OPTION
@MACROS_OPTION
@vars_options
@WAIT_OPTION
@JSON_END_OPTION
@RESUME_OPTION
@with_backend
def submit(backend: Backend, workflow_file: str, services, macros, var_options, vars_files,
           wait_for_end: bool, as_json: bool, resume: bool | None) -> None:
    """Store a workflow as ACCEPTED; a `steepy worker' runs it. Prints the new id last (with
    --wait: then how it ended)."""
    checked_config()
    given = given_vars(var_options, vars_files)
    try:
        submission_id = backend.submit(workflow_file, services, macros, given, resume)
    except InputError as e:
        fail(e.problems)
    if not as_json:
        click.echo(f"submitted {submission_id}")
    if wait_for_end:
        sys.exit(wait_for(backend, [submission_id], as_json))
    if as_json:
        print_document_line(backend, submission_id)


@click.command()
@click.argument("submission_ids", metavar="ID...", nargs=-1, required=True)
@JSON_END_OPTION
@functools.partial(with_reading_backend, lasting=lambda _: True)
def wait(backend: Backend, submission_ids: tuple[str, ...], as_json: bool) -> None:
    """Wait until submissions have finished (a worker or server runs them); exit as `steepy
    run' does, with the highest code of them when several."""
    sys.exit(wait_for(backend, list(submission_ids), as_json))


@click.command(name="list")
@click.option("--status",
              type=click.Choice([str(s) for s in SubmissionStatus], case_sensitive=False),
              help="Only submissions with this status.")
@click.option("--size", default=20, show_default=True, type=click.IntRange(min=1))
@click.option("--offset", default=0, type=click.IntRange(min=0))
@with_reading_backend
def list_submissions(backend: Backend, status, size: int, offset: int) -> None:
    """List submissions, newest first."""
    page, total = backend.submissions(str(status) if status else None, size, offset)
    print_submissions(page, total, offset)
    running = [s["id"] for s in page if s["status"] == SubmissionStatus.RUNNING]
    print_unowned(backend.unowned(running) if running else {})


@click.command()
@click.argument("item_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True,
              help="One JSON object (its `status' is the item's).")
@with_reading_backend
def show(backend: Backend, item_id: str, as_json: bool) -> None:
    """Show a submission (with its chains) or a process chain (with runs and attempts)."""
    document = found(backend.document(item_id), "submission or process chain", item_id)
    if as_json:
        print_json(document)
        return
    print_document(document)
    if "processChains" in document and document["status"] == SubmissionStatus.RUNNING:
        print_unowned(backend.unowned([document["id"]]))


# `steepy status ID': inspecting a submission's or process chain's status is `show' by the
# name Steep's users look for; one command registered under both names (steepy/cli/group.py)


def _not_a_chain(backend: Backend, item_id: str, shown: int = 10) -> NoReturn:
    """`logs' of an id that is no process chain's: if it is a submission's, name its chains
    (exit code 2 either way)."""
    found_chains = backend.submission_chains(item_id, shown)
    if found_chains is None:
        stop(f"No process chain with the id `{item_id}'.")
    chains, total = found_chains
    lines = [f"`{item_id}' is a submission, not a process chain; `steepy logs' prints what "
             "one process chain wrote."]
    if not chains:
        lines.append("It has no process chains yet.")
    else:
        lines.append(f"Its {total} process chain(s):")
        lines += [f"  {c['id']}  {c['status']}" for c in chains]
        if total > len(chains):
            lines.append(f"  and {total - len(chains)} more (`steepy show {item_id}' lists all)")
        lines.append(f"For example: steepy logs {chains[0]['id']}")
    stop("\n".join(lines))


@click.command()
@click.argument("chain_id")
@click.option("--run", "run_number", type=int, help="Run number (default: the latest).")
@click.option("--follow", "-f", is_flag=True, help="Keep printing new lines while the chain runs.")
@functools.partial(with_reading_backend, lasting=lambda options: options["follow"])
def logs(backend: Backend, chain_id: str, run_number: int | None, follow: bool) -> None:
    """Print the output of a process chain's run (of a chain that reused earlier work: the
    output of the run it reused)."""
    chain = backend.chain(chain_id)
    if chain is None:
        _not_a_chain(backend, chain_id)
    if chain.latest_run is None and chain.reused:
        chain_id, chain = _reused_run(backend, chain_id, chain.reused)
        if chain is None:
            return
    if chain.latest_run is None:
        stop(f"Process chain `{chain_id}' has not run yet ({chain.status}).")
    if run_number is not None and not 1 <= run_number <= chain.latest_run:  # a wrong number
        stop(f"No log of run {run_number} of `{chain_id}' (it has no run {run_number}; its "
             f"latest is run {chain.latest_run}).")
    _print_log(backend, chain_id, run_number or chain.latest_run, follow)


def _reused_run(backend: Backend, chain_id: str,
                reused: dict) -> tuple[str, ChainState | None]:
    """The chain whose run a reused chain took over (extensions 15), named in a line on
    stderr, and its state; None when it is no longer stored (said so, too)."""
    source_id, source = reused["processChainId"], backend.chain(reused["processChainId"])
    where = f"process chain {source_id} (submission {reused['submissionId']})"
    if source is None or source.latest_run is None:
        click.echo(f"Process chain `{chain_id}' reused the work of {where}, which is no longer "
                   "stored: its log is gone.", err=True)
        return source_id, None
    click.echo(f"process chain {chain_id} reused the work of {where}; its log of run "
               f"{source.latest_run}:", err=True)
    return source_id, source


_LAST_LINES = "The last lines of its attempts are kept with them (`steepy show`)."


def _finished(backend: Backend, chain_id: str) -> bool:
    now = backend.chain(chain_id)
    return now is None or now.status in FINISHED_CHAIN


def _print_log(backend: Backend, chain_id: str, number: int, follow: bool) -> None:
    """A run's log, with `follow' until the chain has finished. No log of a finished run is
    a line on stderr, exit code 0: the id was right, and a run that printed nothing left
    no log (or it is on another machine)."""
    import time

    offset = 0
    while True:
        chunk = backend.log(chain_id, number, offset)
        if chunk is None:  # the file is made with the first line a run prints
            now = backend.chain(chain_id)
            if now is not None and now.status not in FINISHED_CHAIN and now.latest_run == number:
                if not follow:
                    break  # it has printed nothing yet
                time.sleep(0.2)
                continue
            click.echo(f"No log of run {number} of `{chain_id}' "
                       f"{backend.log_place(chain_id, number)}: it printed nothing, its log "
                       "could not be written, or it ran on another machine without a shared "
                       f"log store. {_LAST_LINES}", err=True)
            return
        if not chunk and offset == 0 and (not follow or _finished(backend, chain_id)):
            click.echo(f"The log of run {number} of `{chain_id}' is empty: it printed nothing "
                       f"or its lines could not be written (a full disk). {_LAST_LINES}",
                       err=True)
            return
        if chunk:
            offset += len(chunk)
            click.echo(chunk.decode("utf-8", "replace"), nl=False)
            continue
        if not follow or _finished(backend, chain_id):
            break
        time.sleep(0.2)


@click.command()
@click.argument("item_id", metavar="ID")
@with_backend
def cancel(backend: Backend, item_id: str) -> None:
    """Cancel a submission or a single process chain."""
    answer = found(backend.cancel(item_id), "submission or process chain", item_id)
    if answer.kind != "submission" and not answer.done:
        stop(f"Process chain `{item_id}' has already finished ({answer.before}); nothing to "
             "cancel.")
    elif answer.kind != "submission":
        click.echo(f"process chain {item_id}: cancel requested (was {answer.before})")
    elif not answer.done:
        stop(f"Submission `{item_id}' has already finished ({answer.before}); nothing to cancel.")
    else:
        click.echo(f"submission {item_id}: cancel requested (was {answer.before}; "
                   f"{answer.running} running chain(s) are being stopped)")


@click.command()
@click.argument("submission_id")
@with_backend
def retry(backend: Backend, submission_id: str) -> None:
    """Run the failed and cancelled chains of a finished submission again."""
    answer = found(backend.retry(submission_id), "submission", submission_id)
    if not answer.done:
        stop(f"Submission `{submission_id}' is {answer.before}; only ERROR, PARTIAL_SUCCESS and "
             "CANCELLED submissions can be retried.")
    click.echo(f"submission {submission_id}: RUNNING again (was {answer.before}); "
               "a worker picks it up")


@click.command(context_settings={"ignore_unknown_options": True})  # N may be -5
@click.argument("item_id", metavar="ID")
@click.argument("priority", type=click.IntRange(-(2**31 - 1), 2**31 - 1), metavar="N")
@with_backend
def priority(backend: Backend, item_id: str, priority: int) -> None:
    """Set the priority of a submission (and of its chains that have not finished) or of a
    process chain: a higher number is run first."""
    answer = found(backend.set_priority(item_id, priority), "submission or process chain",
                   item_id)
    if not answer.done:
        stop(priority_refused(answer.kind, answer.before))
    click.echo(f"{answer.kind} {item_id}: priority {priority} ({answer.before})")


@click.command(name="events")
@click.argument("submission_id")
@with_reading_backend
def show_events(backend: Backend, submission_id: str) -> None:
    """Print the timeline of a submission."""
    events = backend.events(submission_id)
    if events is None:
        not_a_chain(submission_id, backend.document(submission_id))
    print_events(found(events, "submission", submission_id))
