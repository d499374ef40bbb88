"""A submission as the API shows it: a workflow handed to steepy, its status, results and
process chains, and what can be done with it (wait, cancel, retry, follow its timeline)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Iterator

from steepy.api.arguments import timeout_seconds
from steepy.api.backends import Backend
from steepy.api.chain import Chain
from steepy.api.errors import NotFound, Refused, WaitTimeout
from steepy.api.event import Event
from steepy.api.values import results_of, time_of
from steepy.model.submission import SubmissionStatus

POLL_S = (0.02, 0.25)  # how often `wait` and a database's `events` look: at first, at most


@dataclass(eq=False)
class Submission:
    """A submission as of when it was read; `refresh()` reads it again, `wait()` until it
    has finished."""

    id: str
    status: SubmissionStatus
    name: str | None = None
    priority: int = 0
    start_time: datetime | None = None
    end_time: datetime | None = None
    error_message: str | None = None  # after ERROR
    results: dict[str, list] = field(default_factory=dict)  # after SUCCESS, PARTIAL_SUCCESS
    chain_counts: dict[str, int] = field(default_factory=dict)  # e.g. {"succeeded": 2}
    vars: dict[str, Any] = field(default_factory=dict)  # the values given at submit time
    _backend: Backend | None = field(default=None, repr=False)

    @classmethod
    def from_json(cls, data: dict[str, Any], backend: Backend | None = None) -> "Submission":
        counts = {key[:-len("ProcessChains")]: value for key, value in data.items()
                  if key.endswith("ProcessChains")}
        return cls(data["id"], SubmissionStatus(data["status"]), data.get("name"),
                   data.get("priority", 0), time_of(data.get("startTime")),
                   time_of(data.get("endTime")), data.get("errorMessage"), results_of(data),
                   counts, data.get("vars") or {}, backend)

    @property
    def finished(self) -> bool:
        return self.status.finished

    def refresh(self) -> "Submission":
        """Read the submission again; returns it."""
        found = self._need().submission(self.id)
        if found is None:
            raise NotFound(f"No submission with the id `{self.id}'.")
        fresh = Submission.from_json(found, self._backend)
        for name in ("status", "name", "priority", "start_time", "end_time", "error_message",
                     "results", "chain_counts", "vars"):
            setattr(self, name, getattr(fresh, name))
        return self

    def wait(self, timeout: float | None = None) -> SubmissionStatus:
        """Wait until the submission has finished (something must run it: `steepy.run`, a
        `steepy worker` or a server); its final status. WaitTimeout after `timeout`
        seconds."""
        timeout = timeout_seconds(timeout)
        deadline = None if timeout is None else time.monotonic() + timeout
        wait_s = POLL_S[0]
        before = self.status
        while not self.refresh().finished:
            if self.status != before:
                before, wait_s = self.status, POLL_S[0]
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise WaitTimeout(f"Submission `{self.id}' is still {self.status} after "
                                      f"{timeout:g} s.", str(self.status))
                wait_s = min(wait_s, left)
            time.sleep(wait_s)
            wait_s = min(POLL_S[1], wait_s * 1.5)
        return self.status

    def chains(self) -> list[Chain]:
        """Its process chains (oldest first), with their runs and attempts."""
        found = self._need().document(self.id)
        if found is None or "processChains" not in found:
            raise NotFound(f"No submission with the id `{self.id}'.")
        return [Chain.from_json(c, self._backend) for c in found["processChains"]]

    def cancel(self) -> SubmissionStatus:
        """Cancel it: waiting chains do not start, running ones are stopped; the status it
        had. Refused when it has finished already."""
        answer = self._need().cancel(self.id)
        if answer is None or answer.kind != "submission":
            raise NotFound(f"No submission with the id `{self.id}'.")
        if not answer.done:
            raise Refused(f"Submission `{self.id}' has already finished ({answer.before}); "
                          "nothing to cancel.", answer.before)
        self.refresh()
        return SubmissionStatus(answer.before)

    def retry(self) -> SubmissionStatus:
        """Run its failed and cancelled chains again (it is RUNNING again; something must run
        it); the status it had. Refused unless it is ERROR, PARTIAL_SUCCESS or CANCELLED."""
        answer = self._need().retry(self.id)
        if answer is None:
            raise NotFound(f"No submission with the id `{self.id}'.")
        if not answer.done:
            raise Refused(f"Submission `{self.id}' is {answer.before}; only ERROR, "
                          "PARTIAL_SUCCESS and CANCELLED submissions can be retried.",
                          answer.before)
        self.refresh()
        return SubmissionStatus(answer.before)

    def events(self, after: int = 0, follow: bool = True) -> Iterator[Event]:
        """Its timeline, oldest first, from the event after id `after`: live, ending once it
        has finished (with `follow=False`, only what happened so far)."""
        backend = self._need()
        if not follow:
            found = backend.events(self.id, after)
            if found is None:
                raise NotFound(f"No submission with the id `{self.id}'.")
            return iter([Event.from_json(e) for e in found])
        return (Event.from_json(e) for e in backend.follow(self.id, after))

    def _need(self) -> Backend:
        if self._backend is None:
            raise RuntimeError("this Submission was made without a client")
        return self._backend
