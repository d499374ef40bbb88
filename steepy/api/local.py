"""The backend over a local database (SQLite or PostgreSQL): the one place where the API and
the management commands touch the registry. Thin on purpose: each method is a registry call
or two."""

from __future__ import annotations

import time
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from steepy.api.backends import ChainState, Requested
from steepy.api.setup import Setup
from steepy.api.submission import POLL_S
from steepy.model.submission import (ACTIVE_CHAIN, ACTIVE_SUBMISSION, RETRYABLE_SUBMISSION,
                                     SubmissionStatus)

if TYPE_CHECKING:
    from steepy.documents.loading import Document
    from steepy.documents.variables import GivenVars
    from steepy.model import Submission
    from steepy.registry import Registry


class LocalBackend:
    def __init__(self, db: str | None, setup: Setup, registry: "Registry | None" = None):
        self.db = db
        self.setup = setup
        self.stores = False  # True once asked to store: only then is a database created
        if registry is not None:
            self.__dict__["registry"] = registry

    @cached_property
    def registry(self) -> "Registry":
        """Opened when first needed, so a bad workflow is reported before anything is
        created; a database that does not exist is created only to store something (submit,
        add_schedule)."""
        return self.setup.open_registry(self.db, create=self.stores)

    def close(self) -> None:
        if "registry" in self.__dict__:
            self.registry.close()

    def release(self) -> None:
        """Close the connections as the interpreter's teardown would (SQLite removes its -wal
        and -shm files as the last one closes), without close()'s checkpoint: for a command
        that only read (a read-only database refuses a checkpoint)."""
        if "registry" in self.__dict__:
            self.registry.release()

    def submit(self, workflow_file: str, services: tuple[str, ...], macros: tuple[str, ...],
               given: "GivenVars | None" = None, resume: bool | None = None) -> str:
        return self.store(self.prepare(workflow_file, services, macros, given)[0], resume)

    def prepare(self, workflow: "Document | str", services: tuple[str, ...] = (),
                macros: tuple[str, ...] = (), given: "GivenVars | None" = None):
        """The submission of a workflow (a document, or a file read after the services and
        macros; with the values `given` for its variables), checked (InputError), with the
        services and macros it was checked against; nothing stored."""
        from steepy.documents.inputfiles import InputBase
        from steepy.documents.loading import read_file
        from steepy.documents.submissions import submission_from

        service_map, macro_map = self.setup.definitions(services, macros)
        document = read_file(workflow) if isinstance(workflow, str) else workflow
        submission = submission_from(document, service_map, macro_map, self.setup.runtimes(),
                                     given, InputBase.submitter())
        return submission, service_map, macro_map

    def submit_document(self, document: "Document", services: tuple[str, ...],
                        macros: tuple[str, ...], given: "GivenVars | None" = None,
                        resume: bool | None = None) -> str:
        return self.store(self.prepare(document, services, macros, given)[0], resume)

    def store(self, submission: "Submission", resume: bool | None = None) -> str:
        """Store a prepared submission (`resume`: reuse earlier work, extensions 15)."""
        if resume is not None:
            submission.resume = resume
        self.stores = True
        self.registry.requests.add_submission(submission)
        return submission.id

    def submissions(self, status: str | None, size: int,
                    offset: int) -> tuple[list[dict], int]:
        return self.registry.views.submission_summaries(status, size, offset)

    def submission(self, submission_id: str) -> dict | None:
        return self.registry.views.submission(submission_id, with_workflow=False)

    def document(self, item_id: str) -> dict | None:
        from steepy.registry.documents import submission_document

        views = self.registry.views
        if views.get_submission(item_id) is not None:
            return submission_document(views, item_id)
        return self.chain_document(item_id)

    def chain_document(self, chain_id: str) -> dict | None:
        from steepy.registry.documents import chain_document

        record = self.registry.views.get_chain(chain_id)
        return None if record is None else chain_document(self.registry.views, record)

    def chain(self, chain_id: str) -> ChainState | None:
        record = self.registry.views.get_chain(chain_id)
        if record is None:
            return None
        runs = self.registry.views.runs(chain_id)
        return ChainState(str(record.status), runs[-1].run_number if runs else None,
                          record.reused)

    @cached_property
    def _logs(self) -> tuple[Path, int]:
        return self.setup.log_settings()  # where the agents write their logs

    def _log_path(self, chain_id: str, run_number: int) -> Path:
        from steepy.agent.logsource import log_path

        log_dir, group_by_prefix = self._logs
        return log_path(log_dir, chain_id, run_number, group_by_prefix)

    def log(self, chain_id: str, run_number: int, offset: int) -> bytes | None:
        from steepy.agent.logsource import find_log

        found = find_log(*self._logs, self.registry.logs, chain_id, run_number)
        if found is None:
            return None
        return b"".join(found.chunks(offset, max(0, found.size - offset)))

    def log_place(self, chain_id: str, run_number: int) -> str:
        return f"at {self._log_path(chain_id, run_number)} or in the database"

    def cancel(self, item_id: str) -> Requested | None:
        before, running = self.registry.requests.cancel_submission(item_id)
        if before is not None:
            return Requested("submission", str(before), before in ACTIVE_SUBMISSION, len(running))
        before = self.registry.requests.cancel_chain(item_id)
        return None if before is None else Requested("process chain", str(before),
                                                     before in ACTIVE_CHAIN)

    def retry(self, submission_id: str) -> Requested | None:
        before = self.registry.requests.retry_submission(submission_id)
        if before is None:
            return None
        return Requested("submission", str(before), before in RETRYABLE_SUBMISSION)

    def events(self, submission_id: str, after: int = 0) -> list[dict] | None:
        if self.registry.views.get_submission(submission_id) is None:
            return None
        return self.registry.views.events(submission_id, after)

    def follow(self, submission_id: str, after: int = 0) -> Iterator[dict]:
        """Polls the database (quickly while events come, less often while quiet)."""
        views = self.registry.views
        wait_s = POLL_S[0]
        while True:
            status = views.submission_status(submission_id)  # first: its events come after
            events = views.events(submission_id, after)
            for event in events:
                after = event["id"]
                yield event
            if status is None or SubmissionStatus(status).finished:
                return
            time.sleep(wait_s)
            wait_s = POLL_S[0] if events else min(POLL_S[1], wait_s * 1.5)

    def submission_chains(self, submission_id: str, size: int,
                          status: str | None = None) -> tuple[list[dict], int] | None:
        if self.registry.views.get_submission(submission_id) is None:
            return None
        return self.registry.views.chain_summaries(submission_id, status, size=size)

    def live_agents(self) -> int:
        from steepy.api.backends import LIVE_AGENT_S

        return len(self.registry.views.agents(LIVE_AGENT_S))

    def unowned(self, submission_ids: list[str]) -> dict[str, str | None]:
        from steepy.model.common import iso_time

        found = self.registry.leases.unowned(submission_ids)
        return {sid: iso_time(until) for sid, until in found.items()}

    def search(self, query: str, size: int, offset: int) -> dict:
        from steepy.search import Type, matches, parse_query

        parsed = parse_query(query)  # dates in this machine's time zone, as a server's
        search = self.registry.search
        found = search.search(parsed, size=size, offset=offset)
        counts: dict = {kind.value: search.count(parsed, kind) for kind in Type}
        counts["total"] = sum(counts.values())
        return {"counts": counts, "results": [r.to_json(matches(r, parsed)) for r in found]}

    def set_priority(self, item_id: str, priority: int) -> Requested | None:
        requests = self.registry.requests
        before = requests.set_submission_priority(item_id, priority)
        if before is not None:
            return Requested("submission", str(before), before in ACTIVE_SUBMISSION)
        before = requests.set_chain_priority(item_id, priority)
        return None if before is None else Requested("process chain", str(before),
                                                     before in ACTIVE_CHAIN)

    def services(self, services: tuple[str, ...]) -> list[dict]:
        return [s.to_json(all_lists=True) for s in self.setup.definitions(services, ())[0].values()]

    def add_schedule(self, workflow_file: str, services: tuple[str, ...],
                     macros: tuple[str, ...], cron: str | None, every: str | None,
                     name: str | None, timezone: str | None,
                     given: "GivenVars | None" = None) -> dict:
        from steepy.model.common import utcnow
        from steepy.model.ids import unique_id
        from steepy.model.schedule import Schedule
        from steepy.model.triggers import parse_trigger

        trigger = parse_trigger(cron, every, timezone, utcnow())  # InputError first
        submission, _, _ = self.prepare(workflow_file, services, macros, given)
        self.stores = True
        schedule = Schedule.of(unique_id(), submission, trigger, name)
        return self.registry.schedules.add_schedule(schedule).to_json()

    def schedules(self) -> list[dict]:
        return [s.to_json() for s in self.registry.schedules.list_schedules()]

    def schedule(self, schedule_id: str) -> dict | None:
        found = self.registry.schedules.get_schedule(schedule_id)
        if found is None:
            return None
        return {**found.to_json(), "firings": self.registry.schedules.firings(schedule_id)}

    def pause_schedule(self, schedule_id: str, paused: bool) -> dict | None:
        found = self.registry.schedules.set_paused(schedule_id, paused)
        return None if found is None else found.to_json()

    def remove_schedule(self, schedule_id: str) -> bool:
        return self.registry.schedules.remove_schedule(schedule_id)

    def notifications(self, failed: bool, size: int) -> tuple[list[dict], int]:
        return self.registry.outbox.deliveries(failed, size)
