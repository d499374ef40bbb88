"""`Engine.run(until_submission)` runs its own submission only: it neither adopts a dead
engine's submission nor starts other ACCEPTED ones, nor lets its agents take other submissions'
chains. Workers (and `steepy serve`) take everything. (`steepy run` also resumes what dead
engines left: test_run_resumes_abandoned.py.)"""

from __future__ import annotations

import asyncio

from steepy.engine.engine import Engine
from steepy.generator import ProcessChainGenerator
from steepy.model.submission import SubmissionStatus as SS
from steepy.registry import open_registry
from tests.registry.chains import store_chains
from tests.engine.test_engine import MACROS, SERVICES, _example, _settings, _submit
import pytest

pytestmark = [pytest.mark.process]


def _orphan(registry, tmp_path, text: str, owner: str = "dead-engine") -> str:
    """A RUNNING submission whose engine died (lease over), its chains REGISTERED."""
    sid = _submit(registry, text)
    submission = registry.leases.fetch_next_submission(owner, 0.01, only=sid)
    generator = ProcessChainGenerator(submission.workflow, str(tmp_path / "tmp"),
                                      str(tmp_path / "out"), SERVICES, MACROS)
    store_chains(registry, sid, generator.generate(), generator.persist_state())
    return sid


async def test_run_leaves_other_submissions_alone(database_url, tmp_path, monkeypatch) -> None:
    from tests.conftest import ROOT

    monkeypatch.chdir(ROOT)
    registry = open_registry(database_url)
    orphan = _orphan(registry, tmp_path, _example("linear.yaml"))
    waiting = _submit(registry, _example("linear.yaml"))
    mine = _submit(registry, _example("linear.yaml"))
    await asyncio.sleep(0.05)  # the orphan's lease has run out
    engine = Engine(registry, SERVICES, MACROS, _settings(tmp_path))
    await asyncio.wait_for(engine.run(until_submission=mine), 60)
    assert registry.views.get_submission(mine).status == SS.SUCCESS
    assert registry.views.get_submission(waiting).status == SS.ACCEPTED
    assert registry.views.get_submission(orphan).status == SS.RUNNING
    assert all(registry.views.runs(c.chain.id) == [] for c in registry.views.list_chains(orphan)[0])
    assert not any(e["kind"] == "submission.resumed" for e in registry.views.events(orphan))

    # a worker takes both over
    worker = Engine(registry, SERVICES, MACROS, _settings(tmp_path))
    task = asyncio.create_task(worker.run())
    for _ in range(600):
        if all(registry.views.get_submission(s).status.finished for s in (orphan, waiting)):
            break
        await asyncio.sleep(0.05)
    worker.stop.set()
    await asyncio.wait_for(task, 30)
    assert registry.views.get_submission(orphan).status == SS.SUCCESS
    assert registry.views.get_submission(waiting).status == SS.SUCCESS
