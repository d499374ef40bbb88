"""Re-queue at chain level (extensions 11 under `retries.processChains'): a run whose failure
matches `requeue' does not count against maxAttempts, the chain pauses for the rule's delay, and
both the pause (its stored due time) and the count survive a restart of the engine."""

from __future__ import annotations

import asyncio

import pytest

from steepy.engine.engine import Engine
from steepy.model.submission import ProcessChainStatus as CS, SubmissionStatus as SS
from steepy.registry import Registry, open_registry
from tests.conftest import ROOT
from tests.engine.test_engine import MACROS, SERVICES, _run, _settings, _submit

pytestmark = [pytest.mark.process]

WORKFLOW = """
api: 4.7.0
retries:
  processChains:
    maxAttempts: 1
    requeue: {exitCodes: [75], delay: %s}
vars:
  - id: answer
actions:
  - type: execute
    service: flaky
    inputs:
      - {id: fail_times, value: 2}
      - {id: exit_code, value: %d}
    outputs:
      - {id: output_file, var: answer, store: true}
    retries: {maxAttempts: 1}
"""


@pytest.fixture
def registry(database_url) -> Registry:
    return open_registry(database_url)  # SQLite and PostgreSQL


@pytest.fixture(autouse=True)
def in_project(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)  # the flaky tool's path is relative to the project


async def test_requeued_runs_do_not_count(registry, tmp_path) -> None:
    sid = _submit(registry, WORKFLOW % ("100ms", 75))
    await _run(registry, tmp_path, sid)
    submission = registry.views.get_submission(sid)
    assert submission.status == SS.SUCCESS, submission.error_message
    (chain,), _ = registry.views.list_chains(sid)
    assert [r.status for r in registry.views.runs(chain.chain.id)] == [
        "REQUEUED", "REQUEUED", "SUCCESS"]
    finished = [e for e in registry.views.events(sid) if e["kind"] == "chain.finished"]
    assert [e.get("requeued") for e in finished] == ["requeue matched exit code 75"] * 2 + [None]


async def test_other_failures_still_count(registry, tmp_path) -> None:
    sid = _submit(registry, WORKFLOW % ("100ms", 3))
    await _run(registry, tmp_path, sid)
    assert registry.views.get_submission(sid).status == SS.ERROR
    (chain,), _ = registry.views.list_chains(sid)
    assert [r.status for r in registry.views.runs(chain.chain.id)] == ["ERROR"]


async def test_a_requeued_chain_survives_a_restart(registry, tmp_path) -> None:
    sid = _submit(registry, WORKFLOW % ("800ms", 75))
    engine = Engine(registry, SERVICES, MACROS, _settings(tmp_path, agents=1))
    run = asyncio.create_task(engine.run())
    end = asyncio.get_running_loop().time() + 30
    chain_id = None
    while asyncio.get_running_loop().time() < end:
        await asyncio.sleep(0.05)
        chains, _ = registry.views.list_chains(sid)
        if chains and chains[0].status == CS.PAUSED:
            chain_id = chains[0].chain.id
            break
    engine.stop.set()
    await asyncio.wait_for(run, 30)
    assert chain_id is not None, "the chain was never re-queued"
    (chain,), _ = registry.views.list_chains(sid)
    assert chain.status == CS.PAUSED and chain.next_run_at is not None  # stored due time
    assert [r.status for r in registry.views.runs(chain_id)] == ["REQUEUED"]

    await _run(registry, tmp_path, sid)  # another engine takes over: not an exhausted attempt
    submission = registry.views.get_submission(sid)
    assert submission.status == SS.SUCCESS, submission.error_message
    assert [r.status for r in registry.views.runs(chain_id)] == ["REQUEUED", "REQUEUED", "SUCCESS"]
