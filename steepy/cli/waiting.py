"""Following stored submissions to their end, for `steepy wait ID...` and `steepy submit
--wait` (steepy/cli/manage.py). Something else runs them (a `steepy worker`, a server); these
commands only watch, through the same backends as `show` (the database, or a server with
`--server`), and end with the exit code `steepy run` would have: 0 SUCCESS, 1 ERROR or
PARTIAL_SUCCESS, 3 CANCELLED; each submission's end is printed as `steepy run` prints it
(steepy/cli/outcome.py). Ctrl-C stops the watching, not the submissions: exit code 130 (as a
shell says of a command ended by SIGINT), which a script can tell from a failure."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

import click

from steepy.api.backends import Backend
from steepy.cli.common import EXIT_CODES
from steepy.cli.outcome import print_outcome
from steepy.cli.output import stop
from steepy.model.submission import SubmissionStatus

if TYPE_CHECKING:
    from steepy.api.submission import Submission

UNTAKEN_S = 5.0  # ACCEPTED this long with no agent alive: say that nothing will run it
EXIT_INTERRUPTED = 130  # Ctrl-C: the watching stopped, the submissions go on

WAIT_OPTION = click.option("--wait", "wait_for_end", is_flag=True,
                           help="Follow the submission to its end; exit as `steepy run' does.")


def exit_code(statuses: Iterable[str]) -> int:
    """The exit code of submissions that ended with these statuses: `steepy run`'s for one;
    for several, the highest of theirs (any CANCELLED is 3, else any failure is 1)."""
    return max((EXIT_CODES.get(str(status), 1) for status in statuses), default=0)


def wait_for(backend: Backend, submission_ids: list[str]) -> int:
    """Wait until every submission has finished, a line for each as it ends (in the order
    given); the exit code. An unknown id is exit code 2 before anything is waited for."""
    from steepy.api.submission import Submission

    waiting = []
    for sid in submission_ids:
        found = backend.submission(sid)
        if found is None:
            stop(f"No submission with the id `{sid}'.")
        if all(w.id != found["id"] for w in waiting):  # (one given twice is waited for once)
            waiting.append(Submission.from_json(found, backend))
    statuses: list[SubmissionStatus] = []
    try:
        for submission in waiting:
            status = _wait(backend, submission)
            print_outcome(backend, backend.submission(submission.id) or {
                "id": submission.id, "status": str(status),
                "errorMessage": submission.error_message})
            statuses.append(status)
    except KeyboardInterrupt:
        for submission in waiting[len(statuses):]:
            click.echo(f"stopped waiting: submission {submission.id} goes on "
                       f"({submission.status}; `steepy cancel {submission.id}' cancels it)",
                       err=True)
        return EXIT_INTERRUPTED
    return exit_code(statuses)


def _wait(backend: Backend, submission: Submission) -> SubmissionStatus:
    """Until the submission has ended; a line on stderr, once, should it stay ACCEPTED for
    `UNTAKEN_S` while no agent is alive (no worker or server runs against this database)."""
    from steepy.api.errors import WaitTimeout

    while submission.status == SubmissionStatus.ACCEPTED:
        try:
            return submission.wait(UNTAKEN_S)
        except WaitTimeout:
            pass
        if submission.status == SubmissionStatus.ACCEPTED and not backend.live_agents():
            click.echo(f"submission {submission.id}: no steepy worker or server is running "
                       "against this database: start `steepy worker' (the submission waits, "
                       "ACCEPTED)", err=True)
            break
    return submission.wait()  # taken, or said: no more looks at the agents

