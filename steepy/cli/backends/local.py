"""The management commands' backend over the local database: the one place in the CLI where
they touch the registry. Thin on purpose: each method is a registry call or two."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

from steepy.cli.backends import ChainState, Requested
from steepy.cli.common import engine_settings, fail, open_registry_or_fail, prepare
from steepy.model.submission import ACTIVE_SUBMISSION, RETRYABLE_SUBMISSION
from steepy.registry import Registry


class LocalBackend:
    def __init__(self, db: str | None):
        self.db = db

    @cached_property
    def registry(self) -> Registry:
        """Opened when first needed, so a bad workflow is reported before anything is
        created."""
        return open_registry_or_fail(self.db)

    def submit(self, workflow_file: str, services: tuple[str, ...],
               macros: tuple[str, ...]) -> str:
        submission, _, _ = prepare(workflow_file, services, macros)
        self.registry.requests.add_submission(submission)
        return submission.id

    def submissions(self, status: str | None, size: int,
                    offset: int) -> tuple[list[dict], int]:
        return self.registry.views.submission_summaries(status, size, offset)

    def document(self, item_id: str) -> dict | None:
        from steepy.registry.documents import chain_document, submission_document

        views = self.registry.views
        if views.get_submission(item_id) is not None:
            return submission_document(views, item_id)
        record = views.get_chain(item_id)
        return None if record is None else chain_document(views, record)

    def chain(self, chain_id: str) -> ChainState | None:
        record = self.registry.views.get_chain(chain_id)
        if record is None:
            return None
        runs = self.registry.views.runs(chain_id)
        return ChainState(str(record.status), runs[-1].run_number if runs else None)

    @cached_property
    def _agent(self):
        return engine_settings(None).agent  # where the agents write their logs

    def _log_path(self, chain_id: str, run_number: int) -> Path:
        from steepy.agent import log_path

        return log_path(self._agent.log_dir, chain_id, run_number,
                        self._agent.log_group_by_prefix)

    def log(self, chain_id: str, run_number: int, offset: int) -> bytes | None:
        from steepy.agent.logsource import find_log

        found = find_log(self._agent.log_dir, self._agent.log_group_by_prefix,
                         self.registry.logs, chain_id, run_number)
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
        return None if before is None else Requested("process chain", str(before), True)

    def retry(self, submission_id: str) -> Requested | None:
        before = self.registry.requests.retry_submission(submission_id)
        if before is None:
            return None
        return Requested("submission", str(before), before in RETRYABLE_SUBMISSION)

    def events(self, submission_id: str) -> list[dict] | None:
        if self.registry.views.get_submission(submission_id) is None:
            return None
        return self.registry.views.events(submission_id)

    def add_schedule(self, workflow_file: str, services: tuple[str, ...],
                     macros: tuple[str, ...], cron: str | None, every: str | None,
                     name: str | None, timezone: str | None) -> dict:
        from steepy.errors import InputError
        from steepy.model.ids import unique_id
        from steepy.model.common import utcnow
        from steepy.model.schedule import Schedule
        from steepy.model.triggers import parse_trigger

        try:
            trigger = parse_trigger(cron, every, timezone, utcnow())
        except InputError as e:
            fail(e.problems)
        submission, _, _ = prepare(workflow_file, services, macros)
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
