"""A submission's end time and the time of the event that tells of its end are one value:
Steep's event bus sends the stored end time in `submissionEndTimeChanged`, and steepy's
bridge sends the event's time, so the UI shows what GET /workflows/{id} answers."""

from __future__ import annotations

from pathlib import Path

from steepy.model.submission import Submission, SubmissionStatus
from steepy.model.workflow import Workflow
from steepy.registry import open_registry


def test_the_end_times_event_carries_the_stored_end_time(tmp_path: Path) -> None:
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    registry.requests.add_submission(Submission(id="s", workflow=Workflow(name="s")))
    registry.submissions.finish_submission("s", SubmissionStatus.SUCCESS)
    ended = registry.views.get_submission("s").end_time
    told = [e for e in registry.views.events("s") if e["kind"] == "submission.status"
            and e["status"] == "SUCCESS"]
    assert len(told) == 1 and ended is not None
    assert told[0]["time"] == ended.isoformat().replace("+00:00", "Z") or \
        told[0]["time"] == ended.isoformat()
    registry.close()
