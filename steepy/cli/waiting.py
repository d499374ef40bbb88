"""Following stored submissions to their end, for `steepy wait ID...` and `steepy submit
--wait` (steepy/cli/manage.py). Something else runs them (a `steepy worker`, a server); these
commands only watch, through the same backends as `show` (the database, or a server with
`--server`), and end with the exit code `steepy run` would have: 0 SUCCESS, 1 ERROR or
PARTIAL_SUCCESS, 3 CANCELLED."""

from __future__ import annotations

from typing import Iterable

import click

from steepy.api.backends import Backend
from steepy.cli.common import EXIT_CODES
from steepy.cli.output import stop

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
        waiting.append(Submission.from_json(found, backend))
    statuses = []
    for submission in waiting:
        status = submission.wait()
        message = f" ({submission.error_message})" if submission.error_message else ""
        click.echo(f"submission {submission.id}: {status}{message}")
        statuses.append(status)
    return exit_code(statuses)

