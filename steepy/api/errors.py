"""The errors of the Python API, besides `steepy.errors.InputError` (a workflow, its
services, macros or `vars` are wrong: every problem at `file:line:column: path: message`, as
the CLI prints them). Each is a `steepy.errors.SteepyError`; so is
`steepy.http.client.ClientError` (a server cannot be reached or refused a request) and
`steepy.registry.failures.DatabaseUnavailable` (a database cannot be used: steepy.api.guard)."""

from __future__ import annotations

from steepy.errors import SteepyError


class NotFound(SteepyError, LookupError):
    """No submission, process chain or log with this id (the message says which)."""


class Refused(SteepyError):
    """The item's status does not allow the request: cancelling a finished submission,
    retrying one that did not fail. Nothing changed; `status` is the status it has."""

    def __init__(self, message: str, status: str):
        super().__init__(message)
        self.status = status


class WaitTimeout(SteepyError, TimeoutError):
    """`Submission.wait(timeout)` ran out before the submission finished; `status` is the
    status it had then."""

    def __init__(self, message: str, status: str):
        super().__init__(message)
        self.status = status


class EngineFailed(SteepyError):
    """The engine of `steepy.run` stopped by itself: its database could not be used, or
    steepy failed (the cause is the exception's `__cause__`)."""
