"""Where the Python API and the management commands (submit, list, show/status, logs, cancel,
retry, events, schedule, notifications) get their answers: the local database (`local.py`)
or a steepy server over HTTP (`remote.py`, the CLI's `--server URL`). Both answer in the HTTP
API's JSON shapes, so one client (`steepy.api.client`) and one set of commands work on both.
Bad input is an `InputError`; a server that cannot be reached or refuses a request, a
`ClientError` (steepy.http.client)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, Protocol

if TYPE_CHECKING:
    from steepy.documents.loading import Document
    from steepy.documents.variables import GivenVars


LIVE_AGENT_S = 30.0  # an agent heard from this lately is alive (the heartbeat: every 2 s)


@dataclass(frozen=True)
class ChainState:
    """What `logs' needs to know of a process chain."""

    status: str
    latest_run: int | None  # None: it has not run yet
    # a chain that reused earlier work (extensions 15): {"processChainId", "submissionId"}
    reused: dict | None = None


@dataclass(frozen=True)
class Requested:
    """The answer to a cancel, retry or priority request."""

    kind: str  # "submission" or "process chain"
    before: str  # the status before the request
    done: bool  # False: refused, as the status did not allow it (nothing changed)
    running: int = 0  # a cancelled submission's running chains, being stopped


class Backend(Protocol):
    """The view of steepy's state the API and the commands share. `None' answers: no such
    item."""

    def submit(self, workflow_file: str, services: tuple[str, ...], macros: tuple[str, ...],
               given: "GivenVars | None" = None, resume: bool | None = None) -> str:
        """Store a workflow file (with the values `given` for its variables; `resume`:
        reuse earlier work, extensions 15); its submission's id. Bad input: InputError."""

    def submit_document(self, document: "Document", services: tuple[str, ...],
                        macros: tuple[str, ...], given: "GivenVars | None" = None,
                        resume: bool | None = None) -> str:
        """Store a workflow read already (`steepy.api.workflow`); its submission's id."""

    def submissions(self, status: str | None, size: int,
                    offset: int) -> tuple[list[dict], int]:
        """A page of submission summaries, newest first, and the total number."""

    def submission(self, submission_id: str) -> dict | None:
        """A submission (GET /workflows/ID: status, results, error message, counters)."""

    def document(self, item_id: str) -> dict | None:
        """The document of a submission (with its chains) or of a process chain."""

    def chain_document(self, chain_id: str) -> dict | None:
        """A process chain with its runs and attempts."""

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

    def events(self, submission_id: str, after: int = 0) -> list[dict] | None:
        """The timeline of a submission (the events after id `after'), oldest first."""

    def follow(self, submission_id: str, after: int = 0) -> Iterator[dict]:
        """The submission's events after `after' as they are committed, ending once it has
        finished (and its last events were given)."""

    def submission_chains(self, submission_id: str, size: int,
                          status: str | None = None) -> tuple[list[dict], int] | None:
        """Up to `size' of a submission's process chains (summaries, newest first; with
        `status', only those) and how many there are; None: no such submission."""

    def live_agents(self) -> int:
        """How many agents have said they are alive lately (`LIVE_AGENT_S'): none, and no
        engine runs against this database (or server) to take new submissions."""

    def unowned(self, submission_ids: list[str]) -> dict[str, str | None]:
        """Of these submissions, the RUNNING ones that no engine drives now: when the last
        engine's lease ran out (an API time), or None when no engine has taken it since it
        was retried. Over HTTP: none (the API does not tell; a server has its own engine)."""

    def search(self, query: str, size: int, offset: int) -> dict:
        """Steep's search, answered as GET /search answers: `counts' (per type and `total')
        and a page of `results', best first, each with where it matched."""

    def set_priority(self, item_id: str, priority: int) -> Requested | None:
        """Change the priority of a submission (and of its unfinished chains) or of a process
        chain; refused (`done' False, nothing changed) once it has finished."""

    def services(self, services: tuple[str, ...]) -> list[dict]:
        """The service metadata submissions are checked against (JSON shape)."""

    # recurring submissions (extensions 13), in the API's JSON shape of a schedule
    def add_schedule(self, workflow_file: str, services: tuple[str, ...],
                     macros: tuple[str, ...], cron: str | None, every: str | None,
                     name: str | None, timezone: str | None,
                     given: "GivenVars | None" = None) -> dict:
        """Check the workflow (with the values `given` for its variables, kept for every
        submission of the schedule) and the trigger, and store the schedule. Bad input:
        InputError."""

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

    def close(self) -> None:
        """Let go of the database or the connection."""
