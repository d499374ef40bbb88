"""Chains that no live agent can run are not waited on in silence: the chain says why (in
`steepy show`, the API's chain documents and `steepy run`'s view), the timeline says it
once, and the chains start as soon as an agent with the capability arrives."""

from __future__ import annotations

import asyncio
import dataclasses

from steepy.cli.live import render, take_snapshot
from steepy.engine.engine import Engine
from steepy.documents.loading import read_services
from steepy.generator import ProcessChainGenerator
from steepy.model.submission import SubmissionStatus as SS
from steepy.registry import open_registry
from steepy.registry.documents import submission_document
from tests.engine.test_engine import _settings, _submit
from tests.registry.chains import store_chains
import pytest

SERVICES = """
- id: gpu-echo
  name: Echo on a GPU machine
  description: echo
  path: echo
  runtime: other
  requiredCapabilities: [gpu]
  parameters:
    - {id: text, name: Text, description: what, type: input, cardinality: 1..1, dataType: string}
"""
WORKFLOW = """
api: 4.7.0
name: needs a gpu
actions:
  - {id: a, type: execute, service: gpu-echo, inputs: [{id: text, value: one}]}
  - {id: b, type: execute, service: gpu-echo, inputs: [{id: text, value: two}]}
"""
REASON = "waiting: no agent offers gpu"


async def _until(condition, timeout_s: float = 30) -> None:
    for _ in range(int(timeout_s / 0.05)):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("condition not reached")


@pytest.mark.process
async def test_waiting_for_a_capability_is_said(database_url, tmp_path) -> None:
    (tmp_path / "services.yaml").write_text(SERVICES)
    services = read_services(str(tmp_path / "services.yaml"))
    registry = open_registry(database_url)
    sid = _submit(registry, WORKFLOW)
    plain = Engine(registry, services, {}, _settings(tmp_path, agents=1))
    task = asyncio.create_task(plain.run())
    await _until(lambda: registry.views.waiting_counts(sid).get(REASON) == 2)
    await asyncio.sleep(1.5)  # a few more rounds: still said only once
    waiting_events = [e for e in registry.views.events(sid) if e["kind"] == "chain.waiting"]
    assert [(e["reason"], e["chains"]) for e in waiting_events] == [(REASON, 2)]

    document = submission_document(registry.views, sid)
    assert [c["waiting"] for c in document["processChains"]] == [REASON, REASON]
    queries = registry.views
    summaries, _ = queries.chain_summaries(submission_id=sid)
    assert [c["waiting"] for c in summaries] == [REASON, REASON]
    assert queries.chain(summaries[0]["id"])["waiting"] == REASON
    snapshot = take_snapshot(registry, sid, registry.views.events(sid))
    assert snapshot.blocked == {REASON: 2}
    assert any(REASON in getattr(part, "plain", "") for part in render(snapshot).renderables)

    # an engine whose agent offers gpu arrives: the chains run and no longer wait
    settings = _settings(tmp_path, agents=1)
    settings = dataclasses.replace(settings, capabilities=["gpu"])
    gpu = Engine(registry, services, {}, settings)
    gpu_task = asyncio.create_task(gpu.run())
    await _until(lambda: registry.views.get_submission(sid).status == SS.SUCCESS)
    for engine in (plain, gpu):
        engine.stop.set()
    await asyncio.wait_for(asyncio.gather(task, gpu_task), 30)
    assert all("waiting" not in c for c in submission_document(registry.views, sid)["processChains"])


def test_show_prints_why_chains_wait(tmp_path) -> None:
    from click.testing import CliRunner

    from steepy.cli import main

    db = f"sqlite:///{tmp_path / 'db.sqlite'}"
    registry = open_registry(db)
    (tmp_path / "services.yaml").write_text(SERVICES)
    services = read_services(str(tmp_path / "services.yaml"))
    sid = _submit(registry, WORKFLOW)
    # the chains a controller stores, then what an engine's heartbeat does while its agent,
    # which offers nothing, is idle (the test above runs engines for it)
    submission = registry.leases.fetch_next_submission("test", 60)
    generator = ProcessChainGenerator(submission.workflow, str(tmp_path / "tmp"),
                                      str(tmp_path / "out"), services, {})
    store_chains(registry, sid, generator.generate(), generator.persist_state())
    registry.leases.flag_waiting_chains([[]])
    assert registry.views.waiting_counts(sid) == {REASON: 2}
    shown = CliRunner().invoke(main, ["show", sid, "--db", db])
    assert shown.exit_code == 0, shown.output
    assert f"2 process chains {REASON}" in shown.output
    chain_id = registry.views.list_chains(sid)[0][0].chain.id
    shown = CliRunner().invoke(main, ["show", chain_id, "--db", db])
    assert REASON in shown.output
