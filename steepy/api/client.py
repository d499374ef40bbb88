"""`steepy.connect(target)`: a client of a steepy server (`http://...`) or of a database
(a URL like `sqlite:///.steepy/steepy.db` or `postgresql+psycopg://...`, or an SQLite
file's path), with the same methods on both."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Sequence

from steepy.api.arguments import status_name
from steepy.api.backends import Backend
from steepy.api.chain import Chain
from steepy.api.errors import NotFound
from steepy.api.submission import Submission
from steepy.api.workflow import Workflow, workflow_document
from steepy.model.submission import SubmissionStatus

if TYPE_CHECKING:
    from steepy.model.service import Service

Paths = str | os.PathLike | Sequence[str | os.PathLike] | None
PAGE = 100


class Client:
    """What `steepy.connect` returns; `with steepy.connect(...) as client:` closes it."""

    def __init__(self, backend: Backend, services: tuple[str, ...] = (),
                 macros: tuple[str, ...] = ()):
        self.backend = backend
        self._services = services
        self._macros = macros

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self.backend.close()

    def submit(self, workflow: Workflow, vars: Mapping[str, Any] | None = None,
               resume: bool | None = None) -> Submission:
        """Check a workflow (a path, YAML or JSON text, or a dict) and store it as ACCEPTED;
        `vars` sets the values of its variables that have a default value, by id (kept with
        the submission); `resume` reuses the work of earlier submissions (default: the
        configuration's `cache.enabled`). Something must run it: a server, or a `steepy
        worker` on the database. InputError with every problem."""
        from steepy.api.arguments import given_vars

        submission_id = self.backend.submit_document(workflow_document(workflow),
                                                     self._services, self._macros,
                                                     given_vars(vars), resume)
        return self.submission(submission_id)

    def submission(self, submission_id: str) -> Submission:
        found = self.backend.submission(submission_id)
        if found is None:
            raise NotFound(f"No submission with the id `{submission_id}'.")
        return Submission.from_json(found, self.backend)

    def submissions(self, status: SubmissionStatus | str | None = None) -> list[Submission]:
        """Every submission (with `status`, those with it), newest first. As a summary:
        `results`, `error_message` and `vars` come with `refresh()`."""
        wanted = status_name(status)  # InputError for a status there is not
        found: list[Submission] = []
        while True:
            page, total = self.backend.submissions(wanted, PAGE, len(found))
            found += [Submission.from_json(s, self.backend) for s in page]
            if not page or len(found) >= total:
                return found

    def chain(self, chain_id: str) -> Chain:
        found = self.backend.chain_document(chain_id)
        if found is None:
            raise NotFound(f"No process chain with the id `{chain_id}'.")
        return Chain.from_json(found, self.backend)

    def services(self) -> list["Service"]:
        """The service metadata workflows are checked against (a server's own)."""
        from steepy.model.service import Service

        return [Service.from_json(s) for s in self.backend.services(self._services)]


def connect(target: str | os.PathLike, *, services: Paths = None, macros: Paths = None,
            token: str | None = None) -> Client:
    """A client of the steepy server at `target` (`http://` or `https://`; `token`, else
    STEEPY_HTTP_TOKEN or `http.token` of steepy.yaml, is its bearer token), or of the
    database at `target` (a database URL, or an SQLite file's path; `services` and `macros`,
    files, folders or globs, else steepy.yaml's, are what workflows are checked against).
    InputError for a target that is neither, such as Steep's `jdbc:postgresql://...`;
    DatabaseUnavailable (`cannot use the database ...`) for a database that cannot be used,
    raised by the first call that needs it."""
    from steepy.api.setup import LocalSetup

    text = os.fspath(target)
    if text.startswith(("http://", "https://")):
        from steepy.api.remote import RemoteBackend

        return Client(RemoteBackend(text, token))
    from steepy.api.guard import GuardedBackend
    from steepy.api.local import LocalBackend

    url = database_url(text)
    return Client(GuardedBackend(LocalBackend(url, LocalSetup(services, macros)), url))


def database_url(target: str, name: str = "target") -> str:
    """A database URL, checked as `db.url` is (Steep's JDBC form is refused with the URL to
    write); a path as the URL of an SQLite file. InputError names the argument (`name`)."""
    from steepy.config.urls import database_url as checked
    from steepy.errors import InputError, Problem

    url = target if "://" in target or target.startswith("jdbc:") else f"sqlite:///{target}"
    try:
        return checked(url) or url
    except ValueError as e:
        raise InputError(Problem(str(e), file=name)) from None
