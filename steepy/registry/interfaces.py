"""What each user of the registry may ask of it: one small interface per audience (what
crosses them besides records is in writes.py).

- `ChainQueue`: the scheduler takes chains to run and hands back their outcome.
- `SubmissionStore`: a submission's controller stores the chains it generates and ends the
  submission.
- `Leases`: the engine's liveness work: heartbeats, taking submissions to drive, adopting
  those whose controller died, releasing chains whose agent is gone.
- `Requests`: what users ask for (submit, cancel, retry, change priority).
- `ReadViews`: what the CLI, the HTTP API and the UI show.
- `LogStore`: chains' output, written by the agent that runs them, read anywhere.
- `Search`: Steep's search over submissions and chains (GET /search).
- `Schedules`: recurring submissions (extensions 13) and the engines' timers: stored by
  users, fired by whichever engine claims each due time.
- `Housekeeping`: the garbage collector's deletions of old submissions, in batches.
- `Outbox`: the engines' deliveries of notifications (written with their events, outbox.py).

The SQL implementations (queue.py, submissions.py, leases.py, requests.py, views.py) are the
only code that writes SQL; they share one `Connector`. Every method is one transaction, so a
state change and its timeline event are committed together before anyone acts on them. The
methods block: asynchronous code calls them through `steepy.registry.offload`.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Iterable, Protocol, Sequence

from steepy.events import Event
from steepy.model.attempt import AttemptRecord
from steepy.model.submission import ProcessChainStatus, Submission, SubmissionStatus
from steepy.registry.cache import Entry
from steepy.registry.housekeeping import OldSubmission
from steepy.registry.records import ChainRecord, Delivery, RunRecord
from steepy.registry.writes import (AttemptWrite, Claimed, ClaimFor, RoundView, RoundWrite,
                                   RunEnd)

if TYPE_CHECKING:  # (in annotations only: a process that neither schedules nor searches
    # imports neither APScheduler nor the query language)
    from apscheduler.triggers.base import BaseTrigger

    from steepy.model.schedule import Schedule
    from steepy.search import Query, SearchResult, Type


class ChainQueue(Protocol):
    def record(self, ends: Sequence[RunEnd], claims: Sequence[ClaimFor],
               attempts: Sequence[AttemptWrite] = ()) -> list[Claimed | None]:
        """One transaction (group commit): store these attempts as they are now, record these
        ends of runs, then claim a chain for each of these agents; what each claim got, in
        their order. A claimed chain whose last runs were cut (its engine died, or stopped
        and gave it back) carries the attempts of those runs (`ChainRecord.history`)."""
        ...

    def claim_chain(self, agent_id: str, capabilities: Iterable[str] = (),
                    only: str | None = None) -> Claimed | None:
        """`record` of this one claim alone."""
        ...

    def finish_run(self, chain_id: str, run_number: int, run_status: str,
                   chain_status: ProcessChainStatus, *, results: dict | None = None,
                   error_message: str | None = None, attempts: Iterable[AttemptRecord] = (),
                   auto_resume_after: datetime | None = None,
                   requeued: str | None = None,
                   submission_id: str | None = None) -> None:
        """`record` of this one end alone."""
        ...

    def requeue_run(self, chain_id: str, run_number: int, reason: str) -> None: ...

    def resume_due_chains(self, now: datetime | None = None) -> list[str]: ...

    def outlook(self, claims: Sequence[ClaimFor]) -> tuple[bool, datetime | None]:
        """One read: whether any of these claims would get a chain now, and the earliest
        wake-up time of a PAUSED chain."""
        ...

    def next_wake_up(self) -> datetime | None: ...

    def chains_to_stop(self, chain_ids: Iterable[str]) -> list[str]: ...

    def set_progress(self, submission_id: str, chain_id: str, progress: float) -> None: ...

    def add_event(self, submission_id: str | None, event: Event,
                  chain_id: str | None = None) -> None: ...


class SubmissionStore(Protocol):
    def saved_state(self, submission_id: str) -> tuple[dict | None, int]: ...

    def controller_round(self, submission_id: str, write: RoundWrite | None = None,
                         after_round: int | None = None) -> RoundView:
        """A controller's round in one transaction: store what its last round learnt
        (`write`), then read what its next round needs. With `after_round` (resuming from a
        state of that round) chains fed in later rounds are read as not fed."""
        ...

    def chain_counts(self, submission_id: str) -> dict[str, int]: ...

    def cancel_requested(self, submission_id: str) -> bool: ...

    def cancel_chains(self, submission_id: str) -> list[str]: ...

    def successful_results(self, submission_id: str, mentioning: str | None = None
                           ) -> list[dict]: ...

    def reused_from(self, submission_id: str) -> list[str]:
        """The submissions whose chains this one reused (extensions 15)."""

    def finish_submission(self, submission_id: str, status: SubmissionStatus,
                          error_message: str | None = None, results: dict | None = None,
                          owner: str | None = None) -> None:
        """With `owner`, only while the submission is that engine's (else `TakenOver`)."""
        ...


class Cache(Protocol):
    """Reusable work (extensions 15): a controller looks up earlier chains by their keys
    and drops those whose output files are gone; it stores the rest with its rounds."""

    def lookup(self, chain_keys: Sequence[str]) -> dict[str, list[list[Entry]]]: ...

    def similar(self, shapes: Sequence[str]) -> dict[str, Entry]: ...

    def pending(self, chain_ids: Sequence[str], with_fallbacks: Sequence[str] = ()
                ) -> dict[str, list[dict | None] | None]: ...

    def forget(self, chain_ids: Sequence[str]) -> int: ...

    def reused(self, submission_id: str) -> int: ...

    def entries(self, submission_id: str) -> list[Entry]: ...


class Leases(Protocol):
    def heartbeat(self, owner: str, agent_rows: list[dict], lease_s: float) -> None: ...

    def beat(self, owner: str, agent_rows: list[dict] | None, lease_s: float,
             flag: bool) -> tuple[list[dict], list[dict], list[tuple[str, str, int]]]:
        """In one transaction: `heartbeat` (if `agent_rows`), `live_agents(lease_s)`,
        `lost_runs` among them, `forget_lost_agents(3 * lease_s)` and, with `flag`,
        `flag_waiting_chains` for the live agents (what it announced)."""
        ...

    def live_agents(self, max_age_s: float) -> list[dict]: ...

    def forget_agents(self, owner: str) -> None: ...

    def forget_lost_agents(self, max_age_s: float) -> list[str]: ...

    def fetch_next_submission(self, owner: str = "", lease_s: float = 30,
                              only: str | None = None) -> Submission | None: ...

    def adopt_submissions(self, owner: str, lease_s: float, only: str | None = None,
                          abandoned: bool = False) -> list[Submission]: ...

    def unowned(self, submission_ids: Iterable[str]) -> dict[str, datetime | None]: ...

    def lost_runs(self, live_agents: Iterable[str]) -> list[dict]: ...

    def release_orphans(self, live_agents: Iterable[str],
                        max_age_s: float | None = None) -> list[str]: ...

    def flag_waiting_chains(self, offers: list[Iterable[str]]) -> list[tuple[str, str, int]]: ...


class Requests(Protocol):
    def add_submission(self, submission: Submission) -> None: ...

    def cancel_submission(self, submission_id: str) -> tuple[str | None, list[str]]: ...

    def retry_submission(self, submission_id: str) -> str | None: ...

    def cancel_chain(self, chain_id: str) -> str | None: ...

    def set_submission_priority(self, submission_id: str, priority: int) -> str | None: ...

    def set_chain_priority(self, chain_id: str, priority: int) -> str | None: ...


class LogStore(Protocol):
    def append(self, chain_id: str, run_number: int, offset: int, data: bytes) -> None: ...

    def size(self, chain_id: str, run_number: int) -> int | None: ...

    def read(self, chain_id: str, run_number: int, start: int, end: int) -> bytes: ...

    def forget(self, before: datetime) -> int: ...


class ReadViews(Protocol):
    # records, for the engine's own commands and whole documents
    def get_submission(self, submission_id: str) -> Submission | None: ...

    def list_submissions(self, status: str | None = None, size: int = 10,
                         offset: int = 0) -> tuple[list[Submission], int]: ...

    def submission_ids(self, status: SubmissionStatus) -> list[str]: ...

    def get_chain(self, chain_id: str) -> ChainRecord | None: ...

    def list_chains(self, submission_id: str | None = None, status: str | None = None,
                    size: int | None = None, offset: int = 0,
                    oldest_first: bool = False) -> tuple[list[ChainRecord], int]: ...

    def chains_after(self, submission_id: str, after_seq: int, size: int
                     ) -> list[ChainRecord]: ...

    def chain_counts(self, submission_id: str) -> dict[str, int]: ...

    def waiting_counts(self, submission_id: str) -> dict[str, int]: ...

    def runs(self, chain_id: str) -> list[RunRecord]: ...

    def submission_runs(self, submission_id: str,
                        chain_ids: list[str] | None = None) -> list[RunRecord]: ...

    def attempts(self, chain_id: str, run_number: int | None = None) -> list[dict]: ...

    def submission_attempts(self, submission_id: str,
                            chain_ids: list[str] | None = None) -> list[tuple[str, dict]]: ...

    def events(self, submission_id: str, after: int = 0) -> list[dict]: ...

    def skipped_actions(self, submission_id: str) -> dict[str, str]: ...

    def reused_times(self, submission_id: str) -> dict[str, datetime]: ...

    def feed(self, after: int = 0, submission_id: str | None = None,
             limit: int = 1000) -> list[dict]: ...

    def last_event_id(self) -> int: ...

    # Steep's JSON shapes, for the API (built in documents.py)
    def submission_summaries(self, status: str | None = None, size: int = 10,
                             offset: int = 0) -> tuple[list[dict], int]: ...

    def submission(self, submission_id: str, with_workflow: bool = True) -> dict | None: ...

    def submission_status(self, submission_id: str) -> str | None: ...

    def chain_summaries(self, submission_id: str | None = None, status: str | None = None,
                        size: int = 10, offset: int = 0) -> tuple[list[dict], int]: ...

    def chain(self, chain_id: str, run_number: int | None = None,
              with_executables: bool = True) -> dict | None: ...

    def chain_status(self, chain_id: str) -> tuple[str, str] | None: ...

    def run_numbers(self, chain_id: str) -> list[int]: ...

    def agents(self, max_age_s: float) -> list[dict]: ...

    def metrics(self, agent_max_age_s: float) -> dict[str, Any]: ...

    def submission_counts(self) -> dict[str, int]: ...

    def count_submissions(self) -> int: ...


class Search(Protocol):
    """Steep's search over submissions and chains (search.py), for GET /search."""

    def search(self, query: Query, size: int = 10, offset: int = 0) -> list[SearchResult]: ...

    def count(self, query: Query, kind: Type) -> int: ...


class Schedules(Protocol):
    """Recurring submissions (schedules.py) and the engines' own timers."""

    def add_schedule(self, schedule: Schedule) -> Schedule: ...

    def list_schedules(self) -> list[Schedule]: ...

    def get_schedule(self, schedule_id: str) -> Schedule | None: ...

    def set_paused(self, schedule_id: str, paused: bool) -> Schedule | None: ...

    def remove_schedule(self, schedule_id: str) -> bool: ...

    def firings(self, schedule_id: str, limit: int = 20) -> list[dict[str, Any]]: ...

    def settle(self) -> None:
        """Once, before the first look at what is due: fire times stored under an older
        meaning are stored anew (later calls do nothing)."""

    def next_due(self) -> datetime | None: ...

    def fire_due(self, grace_s: float, now: datetime | None = None,
                 limit: int = 100) -> list[str]: ...

    def claim_timer(self, name: str, trigger: BaseTrigger, owner: str,
                    now: datetime | None = None) -> datetime | None: ...

    def timer_due(self, name: str) -> datetime | None: ...


class Housekeeping(Protocol):
    """The garbage collector's deletions (housekeeping.py), one batch per transaction."""

    def old_submissions(self, before: datetime, limit: int,
                        after_seq: int = 0) -> list[OldSubmission]: ...

    def delete_submissions(self, submission_ids: list[str], dry_run: bool = False,
                           before: datetime | None = None,
                           leaving: Iterable[OldSubmission] = ()
                           ) -> tuple[dict[str, int], list[str]]: ...

    def leftovers(self) -> list[OldSubmission]: ...

    def forget_leftovers(self, submission_ids: Iterable[str]) -> None: ...

    def finished_before(self, submission_ids: Iterable[str], before: datetime) -> set[str]: ...

    def reused_by_kept(self, submission_ids: Iterable[str], before: datetime) -> set[str]: ...

    def recorded(self, submission_ids: Iterable[str]) -> set[str]: ...

class Outbox(Protocol):
    """Deliveries of notifications (outbox.py): written in the transaction of their event,
    claimed by an engine under a lease, sent, recorded; listed for `steepy notifications`."""

    def claim_deliveries(self, owner: str, urls: Iterable[str], limit: int,
                         lease_s: float) -> list[Delivery]: ...

    def delivered(self, delivery_id: int) -> None: ...

    def delivery_failed(self, delivery_id: int, owner: str, error: str,
                        next_try: datetime | None) -> None: ...

    def next_delivery_due(self, urls: Iterable[str]) -> datetime | None: ...

    def deliveries(self, failed: bool = False, size: int = 20,
                   offset: int = 0) -> tuple[list[dict], int]: ...
