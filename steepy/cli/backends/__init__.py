"""Where the management commands (submit, list, show/status, logs, cancel, retry, events,
schedule)
get their answers: the local database (`local.py`) or a steepy server over HTTP
(`remote.py`, for `--server URL` or STEEPY_SERVER). Both answer in the HTTP API's JSON
shapes, so one set of commands prints both the same way. The commands choose one
(`steepy.cli.manage.open_backend`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class ChainState:
    """What `logs' needs to know of a process chain."""

    status: str
    latest_run: int | None  # None: it has not run yet


@dataclass(frozen=True)
class Requested:
    """The answer to a cancel or retry request."""

    kind: str  # "submission" or "process chain"
    before: str  # the status before the request
    done: bool  # False: refused, as the status did not allow it (nothing changed)
    running: int = 0  # a cancelled submission's running chains, being stopped


class Backend(Protocol):
    """The management commands' view of steepy's state. `None' answers: no such item."""

    def submit(self, workflow_file: str, services: tuple[str, ...],
               macros: tuple[str, ...]) -> str:
        """Store a workflow; its submission's id. Bad input: InputError (or exit 2)."""

    def submissions(self, status: str | None, size: int,
                    offset: int) -> tuple[list[dict], int]:
        """A page of submission summaries, newest first, and the total number."""

    def document(self, item_id: str) -> dict | None:
        """The document of a submission (with its chains) or of a process chain."""

    def chain(self, chain_id: str) -> ChainState | None:
        """A process chain's status and latest run."""

    def log(self, chain_id: str, run_number: int, offset: int) -> bytes | None:
        """A run's output from byte `offset' on (b'': nothing new); None: no log."""

    def log_place(self, chain_id: str, run_number: int) -> str:
        """Where the log was looked for, for a message (`at PATH', `on SERVER')."""

    def cancel(self, item_id: str) -> Requested | None:
        """Cancel an active submission or a process chain."""

    def retry(self, submission_id: str) -> Requested | None:
        """Run the failed and cancelled chains of a finished submission again."""

    def events(self, submission_id: str) -> list[dict] | None:
        """The timeline of a submission, oldest first."""

    # recurring submissions (extensions 13), in the API's JSON shape of a schedule
    def add_schedule(self, workflow_file: str, services: tuple[str, ...],
                     macros: tuple[str, ...], cron: str | None, every: str | None,
                     name: str | None, timezone: str | None) -> dict:
        """Check the workflow and the trigger and store the schedule. Bad input: InputError
        (or exit 2)."""

    def schedules(self) -> list[dict]:
        """Every schedule, oldest first."""

    def schedule(self, schedule_id: str) -> dict | None:
        """A schedule with its latest firings (`firings')."""

    def pause_schedule(self, schedule_id: str, paused: bool) -> dict | None:
        """Pause or resume a schedule."""

    def remove_schedule(self, schedule_id: str) -> bool:
        """Remove a schedule (its submissions stay); False: no such schedule."""

    def notifications(self, failed: bool, size: int) -> tuple[list[dict], int]:
        """Deliveries of notifications, newest first (with `failed', those that gave up),
        and their number."""
