"""The catch's maxRecoveries counted in the database (registry/recoveries.py): a claim
stores the catch's attempt 1 when one is left, and every run of any chain counts."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from steepy.documents.loading import parse_workflow
from steepy.generator import ProcessChainGenerator
from steepy.model import Submission
from steepy.model.attempt import RUNNING, AttemptRecord
from steepy.registry import Registry, open_registry
from steepy.registry.writes import RoundWrite
from steepy.registry.recoveries import Recoveries
from tests.engine.test_stopping import SH

WORKFLOW = """
api: 4.7.0
{catch}
actions:
  - {{id: a, type: execute, service: sh, inputs: [{{id: script, value: 'exit 1'}}]}}
  - {{id: b, type: execute, service: sh, inputs: [{{id: script, value: 'exit 1'}}]}}
"""
CATCH = "catch: {service: sh, maxRecoveries: 2, inputs: [{id: script, value: 'true'}]}"


@pytest.fixture
def registry(database_url: str) -> Registry:
    return open_registry(database_url)  # SQLite and PostgreSQL


def _submitted(registry: Registry, sid: str, catch: str) -> list[str]:
    """The ids of the submission's two chains (a and b), stored."""
    workflow, _ = parse_workflow(WORKFLOW.format(catch=catch))
    registry.requests.add_submission(Submission(id=sid, workflow=workflow, name=sid))
    chains = ProcessChainGenerator(workflow, "/tmp", "/out", {"sh": SH}).generate()
    registry.submissions.controller_round(sid, RoundWrite(1, chains=chains))
    return [c.id for c in chains]


def _first(action: str) -> AttemptRecord:
    return AttemptRecord(f"{action}.catch", "sh", 1, datetime.now(timezone.utc),
                         outcome=RUNNING, fallback_for=action, ordinal=1)


def test_each_run_of_the_catch_counts_in_any_chain_and_run(registry: Registry) -> None:
    a, b = _submitted(registry, "s", CATCH)
    recoveries = Recoveries(registry.db)
    assert recoveries.claim("s", a, 1, _first("a"))
    assert recoveries.claim("s", a, 2, _first("a"))  # a rerun of the chain: a second one
    assert not recoveries.claim("s", b, 1, _first("b"))  # none left
    stored = [(x["executableId"], x["outcome"]) for x in registry.views.attempts(a)]
    assert stored == [("a.catch", RUNNING)] * 2  # what was claimed is stored at once
    assert registry.views.attempts(b) == []


def test_without_max_recoveries_nothing_is_counted_or_stored(registry: Registry) -> None:
    a, _ = _submitted(registry, "free", "")
    recoveries = Recoveries(registry.db)
    assert all(recoveries.claim("free", a, run, _first("a")) for run in (1, 2, 3))
    assert registry.views.attempts(a) == []
