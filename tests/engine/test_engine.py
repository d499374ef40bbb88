"""Whole workflows through an in-process engine: statuses, results, cancel, retry."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import psutil
import pytest

from steepy.agent import AgentConfig
from steepy.engine.controller import Controller
from steepy.engine.engine import Engine, EngineSettings
from steepy.model.ids import unique_id
from steepy.documents.loading import parse_workflow, read_macros, read_services
from steepy.model import Submission
from steepy.model.submission import ProcessChainStatus as CS, SubmissionStatus as SS
from steepy.registry import Registry, open_registry
from tests.agent.harness import alive
from tests.conftest import ROOT
from tests.engine.workflows import FAILS_ONCE, SLEEPY

SERVICES = read_services(str(ROOT / "services"))
MACROS = read_macros(str(ROOT / "workflows" / "macros"))


@pytest.fixture
def registry(database_url) -> Registry:
    return open_registry(database_url)  # SQLite and PostgreSQL


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
    registry.requests.add_submission(submission)
    return submission.id


async def _run(registry: Registry, tmp_path: Path, submission_id: str, agents: int = 2) -> Engine:
    engine = Engine(registry, SERVICES, MACROS, _settings(tmp_path, agents))
    await asyncio.wait_for(engine.run(until_submission=submission_id), 60)
    return engine


def _example(name: str) -> str:
    return (ROOT / "workflows" / name).read_text()


@pytest.mark.process
@pytest.mark.parametrize("name,status", [
    ("linear.yaml", SS.SUCCESS), ("fan-out.yaml", SS.SUCCESS), ("include.yaml", SS.SUCCESS),
    ("retry-flaky.yaml", SS.SUCCESS), ("timeout-cancelled.yaml", SS.CANCELLED),
    ("process-chain-retries.yaml", SS.SUCCESS), ("requeue.yaml", SS.SUCCESS),
    ("fallback.yaml", SS.SUCCESS)])
async def test_examples_end_as_documented(registry, tmp_path, name: str, status: SS) -> None:
    sid = _submit(registry, _example(name))
    await _run(registry, tmp_path, sid)
    submission = registry.views.get_submission(sid)
    assert submission.status == status, submission.error_message
    assert submission.end_time is not None


@pytest.mark.process
async def test_fan_out_results_are_stored_files(registry, tmp_path) -> None:
    sid = _submit(registry, _example("fan-out.yaml"))
    await _run(registry, tmp_path, sid)
    results = registry.views.get_submission(sid).results
    joined = results["joined"][0]
    assert joined.startswith(str(tmp_path / "out" / sid))
    numbers = Path(joined).read_text().split()
    assert sorted(numbers, key=int) == sorted((ROOT / "workflows/data/numbers.txt").read_text().split(), key=int)


@pytest.mark.process
async def test_process_chain_retries_keep_every_run(registry, tmp_path) -> None:
    sid = _submit(registry, _example("process-chain-retries.yaml"))
    await _run(registry, tmp_path, sid)
    (chain,), _ = registry.views.list_chains(sid)
    runs = registry.views.runs(chain.chain.id)
    assert [r.status for r in runs] == ["ERROR", "ERROR", "SUCCESS"]
    assert runs[0].auto_resume_after is not None
    kinds = [e["kind"] for e in registry.views.events(sid)]
    assert kinds.count("chain.resumed") == 2




@pytest.mark.process
async def test_retry_of_a_failed_submission(registry, tmp_path) -> None:
    sid = _submit(registry, FAILS_ONCE % (tmp_path / "state"))
    await _run(registry, tmp_path, sid)
    failed = registry.views.get_submission(sid)
    assert failed.status == SS.ERROR and failed.error_message == "All process chains failed"
    assert registry.requests.retry_submission(sid) == SS.ERROR
    await _run(registry, tmp_path, sid)
    done = registry.views.get_submission(sid)
    assert done.status == SS.SUCCESS and list(done.results) == ["out"]
    (chain,), _ = registry.views.list_chains(sid)
    assert [r.status for r in registry.views.runs(chain.chain.id)] == ["ERROR", "SUCCESS"]
    assert registry.requests.retry_submission(sid) == SS.SUCCESS  # refused: nothing to retry




def _name(p: psutil.Process) -> str | None:
    try:
        return p.name()
    except psutil.Error:  # ended meanwhile
        return None


@pytest.mark.process
async def test_cancel_running_submission_stops_the_tool(registry, tmp_path) -> None:
    sid = _submit(registry, SLEEPY)
    engine = Engine(registry, SERVICES, MACROS, _settings(tmp_path))
    task = asyncio.create_task(engine.run(until_submission=sid))
    # the chain is RUNNING once claimed, a moment before its tool has started: wait for the tool
    sleepers: list[psutil.Process] = []
    end = asyncio.get_running_loop().time() + 30
    while not sleepers and asyncio.get_running_loop().time() < end:
        await asyncio.sleep(0.05)
        sleepers = [p for p in psutil.Process(os.getpid()).children(recursive=True)
                    if _name(p) == "sleep"]
    assert sleepers and registry.views.chain_counts(sid).get(CS.RUNNING)
    registry.requests.cancel_submission(sid)
    engine.changed("chains")
    await asyncio.wait_for(task, 20)
    assert registry.views.get_submission(sid).status == SS.CANCELLED
    assert not any(alive(p) for p in sleepers)


async def test_cancel_accepted_submission_ends_it(registry) -> None:
    sid = _submit(registry, SLEEPY)
    assert registry.requests.cancel_submission(sid) == (SS.ACCEPTED, [])
    assert registry.views.get_submission(sid).status == SS.CANCELLED
    assert registry.leases.fetch_next_submission() is None


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
    # the engine's controller alone: the generator fails before any chain exists to run
    stopped: list[str] = []
    controller = Controller(registry.submissions, SERVICES, MACROS, str(tmp_path / "tmp"),
                            str(tmp_path / "out"), lambda: None, stopped.extend)
    driving = controller.start(registry.leases.fetch_next_submission("test", 60))
    await asyncio.wait_for(driving, 60)
    submission = registry.views.get_submission(sid)
    assert submission.status == SS.ERROR and "cardinality" in submission.error_message
    assert stopped == [] and not controller.tasks


@pytest.mark.process
async def test_demo_shows_retries_and_a_timeout_on_the_timeline(registry, tmp_path) -> None:
    sid = _submit(registry, _example("demo.yaml"))
    await _run(registry, tmp_path, sid)
    assert registry.views.get_submission(sid).status == SS.SUCCESS
    failed = [e for e in registry.views.events(sid) if e["kind"] == "chain.attemptFailed"]
    assert [e["serviceId"] for e in failed].count("flaky") == 2
    (timeout,) = [e for e in failed if e["serviceId"] == "slowprint"]
    assert timeout["timeoutKind"] == "maximum inactivity"
    retries = [e for e in registry.views.events(sid) if e["kind"] == "chain.retryScheduled"]
    assert len(retries) == 3 and all("delayMs" in e and "at" in e for e in retries)
    chains, _ = registry.views.list_chains(sid)
    attempts = [a for c in chains for a in registry.views.attempts(c.chain.id)]
    assert sorted(a["outcome"] for a in attempts if a["serviceId"] == "flaky") == ["FAILED", "FAILED", "SUCCESS"]


@pytest.mark.process
async def test_requeues_are_on_the_timeline_and_spend_no_attempt(registry, tmp_path) -> None:
    sid = _submit(registry, _example("requeue.yaml"))
    await _run(registry, tmp_path, sid)
    assert registry.views.get_submission(sid).status == SS.SUCCESS
    events = registry.views.events(sid)
    requeued = [e for e in events if e["kind"] == "chain.attemptRequeued"]
    assert [(e["attempt"], e["exitCode"], e["delayMs"]) for e in requeued] == [(1, 75, 100)] * 2
    assert not [e for e in events if e["kind"] in ("chain.attemptFailed", "chain.retryScheduled")]
    (chain,), _ = registry.views.list_chains(sid)
    attempts = registry.views.attempts(chain.chain.id)
    assert [(a["attempt"], a["outcome"]) for a in attempts] == [
        (1, "REQUEUED"), (1, "REQUEUED"), (1, "SUCCESS")]


SLOW_COPY = """
- id: slowcopy
  name: Slow copy
  description: copies a file after a pause, so that every copy finishes in a round of its own
  path: {tool}
  runtime: other
  parameters:
    - {{id: i, name: i, description: source, type: input, cardinality: 1..1}}
    - {{id: o, name: o, description: target, type: output, cardinality: 1..1}}
"""


@pytest.mark.process
async def test_resume_feeds_again_what_the_stored_generator_state_lacks(registry, tmp_path) -> None:
    """The controller stores the generator state only with new chains (or now and then).
    Outcomes it fed in rounds after the stored state must be fed again after a crash,
    or the fan-in below would never be generated."""
    tool = tmp_path / "slowcopy"
    tool.write_text('#!/bin/sh\nsleep 0.3\ncp "$1" "$2"\n')
    tool.chmod(0o755)
    (tmp_path / "services.yaml").write_text(SLOW_COPY.format(tool=tool))
    services = {**SERVICES, **read_services(str(tmp_path / "services.yaml"))}
    inputs = []
    for n in range(3):
        inputs.append(tmp_path / f"in{n}.txt")
        inputs[-1].write_text(f"{n}\n")
    sid = _submit(registry, f"""api: 4.7.0
vars:
  - {{id: inputs, value: [{', '.join(f'"{p}"' for p in inputs)}]}}
actions:
  - type: for
    input: inputs
    enumerator: i
    output: copies
    yieldToOutput: c
    actions:
      - {{id: copy, type: execute, service: slowcopy, inputs: [{{id: i, var: i}}],
         outputs: [{{id: o, var: c}}]}}
  - {{id: join, type: execute, service: cat, inputs: [{{id: input_files, var: copies}}],
     outputs: [{{id: output_file, var: joined, store: true}}]}}
""")
    fed_rounds: list[int] = []  # rounds whose outcomes were stored without the state
    controller_round = registry.submissions.controller_round

    def crash_before_the_join(submission_id, write=None, after_round=None):
        if write is not None:
            if any(e.service_id == "cat" for c in write.chains for e in c.executables):
                raise RuntimeError("the controller died here")
            if write.fed and not write.save_state:
                fed_rounds.append(write.round_number)
        return controller_round(submission_id, write, after_round)

    registry.submissions.controller_round = crash_before_the_join
    engine = Engine(registry, services, MACROS, _settings(tmp_path, agents=1))
    run = asyncio.create_task(engine.run())
    end = asyncio.get_running_loop().time() + 30
    while asyncio.get_running_loop().time() < end:
        await asyncio.sleep(0.05)
        if engine.idle and fed_rounds:
            break
    engine.stop.set()
    await asyncio.wait_for(run, 30)
    assert fed_rounds, "no copy was fed in a round of its own: the test proves nothing"
    assert registry.views.get_submission(sid).status == SS.RUNNING

    del registry.submissions.controller_round  # a healthy engine takes over
    engine = Engine(registry, services, MACROS, _settings(tmp_path, agents=1))
    await asyncio.wait_for(engine.run(until_submission=sid), 30)
    submission = registry.views.get_submission(sid)
    assert submission.status == SS.SUCCESS, submission.error_message
    assert Path(submission.results["joined"][0]).read_text() == "0\n1\n2\n"


@pytest.mark.process
async def test_chains_generated_after_a_priority_change_get_the_new_priority(registry, tmp_path) -> None:

    sid = _submit(registry, _example("fan-out.yaml"))
    controller_round = registry.submissions.controller_round

    def change_after_the_first_step(submission_id, write=None, after_round=None):
        view = controller_round(submission_id, write, after_round)
        if write is not None and any(e.service_id == "split"
                                     for c in write.chains for e in c.executables):
            registry.requests.set_submission_priority(submission_id, 7)
        return view

    registry.submissions.controller_round = change_after_the_first_step
    await _run(registry, tmp_path, sid)
    assert registry.views.get_submission(sid).status == SS.SUCCESS
    # as generated (the stored chain document), not as changed later (the column, which the
    # change also set on `split', still registered then)
    from sqlalchemy import select

    from steepy.registry.tables import process_chains

    with registry.db.read() as conn:
        documents = conn.execute(select(process_chains.c.chain)
                                 .where(process_chains.c.submission_id == sid)).scalars()
        generated = [json.loads(d) for d in documents]
    priorities = {c["executables"][0]["serviceId"]: c.get("priority", 0) for c in generated}
    assert priorities == {"split": 0, "sort": 7, "cat": 7}
    chains, _ = registry.views.list_chains(sid)
    assert {c.chain.priority for c in chains} == {7}
