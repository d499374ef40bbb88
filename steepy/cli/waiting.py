"""Following stored submissions to their end, for `steepy wait ID...` and `steepy submit
--wait` (steepy/cli/manage.py). Something else runs them (a `steepy worker`, a server); these
commands only watch, through the same backends as `show` (the database, or a server with
`--server`), and end with the exit code `steepy run` would have: 0 SUCCESS, 1 ERROR or
PARTIAL_SUCCESS, 3 CANCELLED; each submission's end is printed as `steepy run` prints it
(steepy/cli/outcome.py), as it ends. Ctrl-C stops the watching, not the submissions: exit
code 130 (as a shell says of a command ended by SIGINT), which a script can tell from a
failure. A server that stops answering is waited for (a restart) for `SERVER_GONE_S`, then
the watching stops with exit code 4: the submissions go on there."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Callable, Iterable

import click

from steepy.api.backends import Backend
from steepy.cli.common import EXIT_CODES
from steepy.cli.outcome import print_outcome
from steepy.cli.output import print_unowned, stop
from steepy.model.submission import SubmissionStatus

if TYPE_CHECKING:
    from steepy.api.submission import Submission

UNTAKEN_S = 5.0  # ACCEPTED this long with no agent alive: say that nothing will run it
LOOK_S = (0.02, 0.25)  # how often the submissions are read: at first, at most
READS_PER_S = 40  # of many submissions (a round reads each), at most
SERVER_GONE_S = 300.0  # a server that does not answer this long: the watching stops
EXIT_INTERRUPTED = 130  # Ctrl-C: the watching stopped, the submissions go on
EXIT_GONE = 4  # the server cannot be reached (docs/reference/exit-codes.md)

WAIT_OPTION = click.option("--wait", "wait_for_end", is_flag=True,
                           help="Follow the submission to its end; exit as `steepy run' does.")
JSON_END_OPTION = click.option(
    "--json", "as_json", is_flag=True,
    help="Print each submission's document as one line of JSON (as it ends, with --wait), "
         "as `steepy run --json' prints it, instead of the lines for people.")


def print_document_line(backend: Backend, submission_id: str) -> None:
    """The submission's whole document (its chains too), as one line of JSON."""
    import json

    click.echo(json.dumps(backend.document(submission_id), ensure_ascii=False))


def exit_code(statuses: Iterable[str]) -> int:
    """The exit code of submissions that ended with these statuses: `steepy run`'s for one;
    for several, the highest of theirs (any CANCELLED is 3, else any failure is 1)."""
    return max((EXIT_CODES.get(str(status), 1) for status in statuses), default=0)


# how the watch waits and tells time (tests give it a virtual clock)
SLEEP: Callable[[float], None] = time.sleep
MONOTONIC: Callable[[], float] = time.monotonic


def wait_for(backend: Backend, submission_ids: list[str], as_json: bool = False) -> int:
    """Wait until every submission has finished, a line for each as it ends; the exit code.
    An unknown id (or a process chain's) is exit code 2 before anything is waited for."""
    from steepy.api.submission import Submission

    waiting: list[Submission] = []
    for sid in submission_ids:
        found = backend.submission(sid)
        if found is None:
            chain = backend.chain_document(sid)
            if chain is not None:
                stop(f"`{sid}' is a process chain, not a submission; its submission is "
                     f"{chain.get('submissionId')}.")
            stop(f"No submission with the id `{sid}'.")
        if all(w.id != found["id"] for w in waiting):  # (one given twice is waited for once)
            waiting.append(Submission.from_json(found, backend))
    watch = _Watch(backend, waiting, SLEEP, MONOTONIC, as_json)
    try:
        return watch.to_the_end()
    except KeyboardInterrupt:
        watch.stopped("stopped waiting")
        return EXIT_INTERRUPTED


def _unreachable() -> type[Exception] | tuple[()]:
    """What a server that cannot be reached raises; nothing for a database backend (`except
    ()` catches nothing, and `steepy wait' on a database loads no HTTP client)."""
    client = sys.modules.get("steepy.http.client")
    return () if client is None else client.Unreachable


class _Watch:
    """The submissions waited for, read again and again until each has ended."""

    def __init__(self, backend: Backend, waiting: list[Submission],
                 sleep: Callable[[float], None], monotonic: Callable[[], float],
                 as_json: bool = False):
        self.backend, self.left = backend, list(waiting)
        self.sleep, self.monotonic = sleep, monotonic
        self.ended: list[SubmissionStatus] = []
        self.began = monotonic()
        self.unattended: set[str] = set()  # said to be ACCEPTED with no agent alive
        self.orphaned: set[str] = set()  # said to be RUNNING with no engine driving it
        self.looked_at = self.began  # when the agents and engines were last looked at
        self.gone_since: float | None = None
        self.as_json = as_json  # each end as the submission's document (`--json`)

    def to_the_end(self) -> int:
        look_s = LOOK_S[0]
        while self.left:
            if not self._look():
                if self.monotonic() - (self.gone_since or 0.0) >= SERVER_GONE_S:
                    self.stopped(f"stopped waiting: the server did not answer for "
                                 f"{SERVER_GONE_S:g} s")
                    return EXIT_GONE
                self.sleep(1.0)
                continue
            if self.left:  # (many ids: each round reads each, so the rounds are rarer)
                self.sleep(max(look_s, len(self.left) / READS_PER_S))
                look_s = min(LOOK_S[1], look_s * 1.5)
        return exit_code(self.ended)

    def _look(self) -> bool:
        """Read each submission left; print those that ended. False: the server did not
        answer (said once; the submissions go on there)."""
        try:
            for submission in list(self.left):
                submission.refresh()
                if submission.finished:
                    self._say_end(submission)  # (first: should the server go away meanwhile,
                    self.left.remove(submission)  # the end is read and said again)
                    self.ended.append(submission.status)
            self._nobody_runs()
        except _unreachable() as e:
            if self.gone_since is None:
                self.gone_since = self.monotonic()
                click.echo(f"{e}; still waiting for it (a restart): the submissions go on "
                           "there", err=True)
            return False
        if self.gone_since is not None:
            self.gone_since = None
            click.echo("the server answers again", err=True)
        return True

    def _say_end(self, submission: Submission) -> None:
        if self.as_json:
            print_document_line(self.backend, submission.id)
            return
        print_outcome(self.backend, self.backend.submission(submission.id) or {
            "id": submission.id, "status": str(submission.status),
            "errorMessage": submission.error_message})

    def _nobody_runs(self) -> None:
        """A line on stderr, once each, for a submission that nothing will run: ACCEPTED
        while no agent is alive (no worker or server runs against this database), or RUNNING
        with no engine driving it (its engine died; `steepy show` says so too). Looked at
        every `UNTAKEN_S`: a worker may die later."""
        if self.monotonic() - self.looked_at < UNTAKEN_S:
            return
        self.looked_at = self.monotonic()
        accepted = [s.id for s in self.left if s.status == SubmissionStatus.ACCEPTED
                    and s.id not in self.unattended]
        if accepted and not self.backend.live_agents():
            for sid in accepted:
                self.unattended.add(sid)
                click.echo(f"submission {sid}: no steepy worker or server is running against "
                           "this database: start `steepy worker' (the submission waits, "
                           "ACCEPTED)", err=True)
        running = [s.id for s in self.left if s.status == SubmissionStatus.RUNNING
                   and s.id not in self.orphaned]
        if running:
            unowned = self.backend.unowned(running)
            self.orphaned.update(unowned)
            print_unowned(unowned)

    def stopped(self, why: str) -> None:
        """What goes on without this watch: each submission that has not ended."""
        for s in self.left:
            click.echo(f"{why}: submission {s.id} goes on ({s.status}; `steepy cancel "
                       f"{s.id}' cancels it)", err=True)
