"""Whole workflows through an in-process engine: statuses, results, cancel, retry."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import psutil
import pytest

from steepy.agent import AgentConfig
from steepy.engine import Engine, EngineSettings
from steepy.ids import unique_id
from steepy.loading import parse_workflow, read_macros, read_services
from steepy.model import Submission
from steepy.model.submission import ProcessChainStatus as CS, SubmissionStatus as SS
from steepy.registry import Registry, open_registry
from tests.conftest import ROOT
from tests.engine.workflows import FAILS_ONCE, SLEEPY

SERVICES = read_services(str(ROOT / "services"))
MACROS = read_macros(str(ROOT / "workflows" / "macros"))


@pytest.fixture
def registry(tmp_path) -> Registry:
    return open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")


@pytest.fixture(autouse=True)
def in_project(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)  # the examples name their inputs relative to the project


def _settings(tmp_path: Path, agents: int = 2) -> EngineSettings:
    return EngineSettings(tmp_path=str(tmp_path / "tmp"), out_path=str(tmp_path / "out"),
                          agents=agents, sweep_s=0.5, heartbeat_s=0.5, lease_s=3,
                          agent=AgentConfig(kill_grace_period_ms=1000, log_dir=tmp_path / "logs"))


def _submit(registry: Registry, text: str) -> str:
    workflow, _ = parse_workflow(text)
    submission = Submission(id=unique_id(), workflow=workflow, name=workflow.name,
                            priority=workflow.priority, source=text)
    registry.add_submission(submission)
    return submission.id


async def _run(registry: Registry, tmp_path: Path, submission_id: str, agents: int = 2) -> Engine:
    engine = Engine(registry, SERVICES, MACROS, _settings(tmp_path, agents))
    await asyncio.wait_for(engine.run(until_submission=submission_id), 60)
    return engine


def _example(name: str) -> str:
    return (ROOT / "workflows" / name).read_text()


@pytest.mark.parametrize("name,status", [
    ("linear.yaml", SS.SUCCESS), ("fan-out.yaml", SS.SUCCESS), ("include.yaml", SS.SUCCESS),
    ("retry-flaky.yaml", SS.SUCCESS), ("timeout-cancelled.yaml", SS.CANCELLED),
    ("process-chain-retries.yaml", SS.SUCCESS)])
async def test_examples_end_as_documented(registry, tmp_path, name: str, status: SS) -> None:
    sid = _submit(registry, _example(name))
    await _run(registry, tmp_path, sid)
    submission = registry.get_submission(sid)
    assert submission.status == status, submission.error_message
    assert submission.end_time is not None


async def test_fan_out_results_are_stored_files(registry, tmp_path) -> None:
    sid = _submit(registry, _example("fan-out.yaml"))
    await _run(registry, tmp_path, sid)
    results = registry.get_submission(sid).results
    joined = results["joined"][0]
    assert joined.startswith(str(tmp_path / "out" / sid))
    numbers = Path(joined).read_text().split()
    assert sorted(numbers, key=int) == sorted((ROOT / "workflows/data/numbers.txt").read_text().split(), key=int)


async def test_process_chain_retries_keep_every_run(registry, tmp_path) -> None:
    sid = _submit(registry, _example("process-chain-retries.yaml"))
    await _run(registry, tmp_path, sid)
    (chain,), _ = registry.list_chains(sid)
    runs = registry.runs(chain.chain.id)
    assert [r.status for r in runs] == ["ERROR", "ERROR", "SUCCESS"]
    assert runs[0].auto_resume_after is not None
    kinds = [e["kind"] for e in registry.events(sid)]
    assert kinds.count("chain.resumed") == 2




async def test_retry_of_a_failed_submission(registry, tmp_path) -> None:
    sid = _submit(registry, FAILS_ONCE % (tmp_path / "state"))
    await _run(registry, tmp_path, sid)
    failed = registry.get_submission(sid)
    assert failed.status == SS.ERROR and failed.error_message == "All process chains failed"
    assert registry.retry_submission(sid) == SS.ERROR
    await _run(registry, tmp_path, sid)
    done = registry.get_submission(sid)
    assert done.status == SS.SUCCESS and list(done.results) == ["out"]
    (chain,), _ = registry.list_chains(sid)
    assert [r.status for r in registry.runs(chain.chain.id)] == ["ERROR", "SUCCESS"]
    assert registry.retry_submission(sid) == SS.SUCCESS  # refused: nothing to retry




async def test_cancel_running_submission_stops_the_tool(registry, tmp_path) -> None:
    sid = _submit(registry, SLEEPY)
    engine = Engine(registry, SERVICES, MACROS, _settings(tmp_path))
    task = asyncio.create_task(engine.run(until_submission=sid))
    for _ in range(200):
        await asyncio.sleep(0.05)
        if registry.chain_counts(sid).get(CS.RUNNING):
            break
    sleepers = [p for p in psutil.Process(os.getpid()).children(recursive=True)
                if p.name() == "sleep"]
    assert sleepers
    registry.cancel_submission(sid)
    engine.scheduler.wake()
    await asyncio.wait_for(task, 20)
    assert registry.get_submission(sid).status == SS.CANCELLED
    assert not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in sleepers)


async def test_cancel_accepted_submission_ends_it(registry) -> None:
    sid = _submit(registry, SLEEPY)
    assert registry.cancel_submission(sid) == (SS.ACCEPTED, [])
    assert registry.get_submission(sid).status == SS.CANCELLED
    assert registry.fetch_next_submission() is None


CARDINALITY = """
api: 4.7.0
vars:
  - {id: many, value: [a.txt, b.txt]}
actions:
  - type: execute
    service: cp
    inputs: [{id: input_file, var: many}]
    outputs: [{id: output_file, var: out}]
"""


async def test_error_while_generating_ends_submission_with_its_message(registry, tmp_path) -> None:
    sid = _submit(registry, CARDINALITY)
    await _run(registry, tmp_path, sid)
    submission = registry.get_submission(sid)
    assert submission.status == SS.ERROR and "cardinality" in submission.error_message


async def test_demo_shows_retries_and_a_timeout_on_the_timeline(registry, tmp_path) -> None:
    sid = _submit(registry, _example("demo.yaml"))
    await _run(registry, tmp_path, sid)
    assert registry.get_submission(sid).status == SS.SUCCESS
    failed = [e for e in registry.events(sid) if e["kind"] == "chain.attemptFailed"]
    assert [e["serviceId"] for e in failed].count("flaky") == 2
    (timeout,) = [e for e in failed if e["serviceId"] == "slowprint"]
    assert timeout["timeoutKind"] == "maximum inactivity"
    retries = [e for e in registry.events(sid) if e["kind"] == "chain.retryScheduled"]
    assert len(retries) == 3 and all("delayMs" in e and "at" in e for e in retries)
    chains, _ = registry.list_chains(sid)
    attempts = [a for c in chains for a in registry.attempts(c.chain.id)]
    assert sorted(a["outcome"] for a in attempts if a["serviceId"] == "flaky") == ["FAILED", "FAILED", "SUCCESS"]
