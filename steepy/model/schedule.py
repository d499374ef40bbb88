"""A recurring submission (extensions 13): a workflow, checked and stored when the schedule
was added, submitted again at every fire time of its trigger."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from steepy.model.common import iso_time
from steepy.model.submission import Submission
from steepy.model.workflow import Workflow
from steepy.model.triggers import TriggerSpec

MAX_NAME = 200  # characters of a schedule's name


def name_problem(name: str | None) -> str | None:
    """What is wrong with a schedule's name as given (None: nothing; no name given is
    fine: the workflow's name is used)."""
    if name is None:
        return None
    if not name.strip():
        return "is empty; leave it out for the workflow's name"
    if len(name) > MAX_NAME:
        return f"is {len(name)} characters long; at most {MAX_NAME}"
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return "must be one line without control characters"
    return None


@dataclass
class Schedule:
    id: str
    name: str
    trigger: TriggerSpec
    workflow: Workflow
    source: str | None = None
    required_capabilities: list[str] = field(default_factory=list)
    priority: int = 0
    paused: bool = False
    created_time: datetime | None = None
    last_fire_time: datetime | None = None
    next_fire_time: datetime | None = None
    last_submission_id: str | None = None
    vars: dict[str, Any] | None = None  # the values given when it was added, by variable id

    @classmethod
    def of(cls, schedule_id: str, submission: Submission, trigger: TriggerSpec,
           name: str | None = None) -> "Schedule":
        """The schedule of a checked workflow (as `steepy submit' would store it)."""
        return cls(schedule_id, name or submission.name or f"schedule {schedule_id}", trigger,
                   submission.workflow, submission.source,
                   list(submission.required_capabilities), submission.priority,
                   vars=submission.vars)

    def submission(self, submission_id: str) -> Submission:
        """The submission of one firing: named after the schedule, ACCEPTED, with the values
        given for its variables when the schedule was added (already in its workflow)."""
        return Submission(id=submission_id, workflow=self.workflow, name=self.name,
                          priority=self.priority,
                          required_capabilities=list(self.required_capabilities),
                          source=self.source, vars=dict(self.vars) if self.vars else None)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "name": self.name, **self.trigger.to_json(),
                               "paused": self.paused, "workflowName": self.workflow.name}
        for key, value in (("createdTime", self.created_time),
                           ("lastFireTime", self.last_fire_time),
                           ("nextFireTime", self.next_fire_time)):
            if value is not None:
                out[key] = iso_time(value)
        if self.last_submission_id:
            out["lastSubmissionId"] = self.last_submission_id
        if self.vars:
            out["vars"] = self.vars
        return out
