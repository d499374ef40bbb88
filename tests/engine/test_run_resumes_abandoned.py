"""`Engine.run(until_submission, resume_abandoned=True)` (`steepy run`): besides its own
submission it takes over the RUNNING submissions that dead engines of `steepy run` left, runs
their chains and stops once they have finished too; it still starts no other ACCEPTED
submission, and leaves those a retry made RUNNING (no engine held them) and those of workers and
servers to workers."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import update

from steepy.engine.engine import Engine
from steepy.model.submission import SubmissionStatus as SS
from steepy.registry import open_registry
from steepy.registry.leases import RUN_OWNER
from steepy.registry.tables import submissions
from tests.engine.test_engine import MACROS, SERVICES, _example, _settings, _submit
from tests.engine.test_run_scope import _orphan

pytestmark = [pytest.mark.process]


async def test_run_resumes_what_dead_engines_left(database_url, tmp_path, monkeypatch) -> None:
    from tests.conftest import ROOT

    monkeypatch.chdir(ROOT)
    registry = open_registry(database_url)
    orphan = _orphan(registry, tmp_path, _example("linear.yaml"), owner=RUN_OWNER + "dead")
    workers = _orphan(registry, tmp_path, _example("linear.yaml"), owner="dead-worker")
    retried = _orphan(registry, tmp_path, _example("linear.yaml"), owner=RUN_OWNER + "old")
    with registry.db.write() as conn:  # as `steepy retry' leaves it: RUNNING, no engine yet
        conn.execute(update(submissions).where(submissions.c.id == retried)
                     .values(owner=None, lease_until=None))
    waiting = _submit(registry, _example("linear.yaml"))
    mine = _submit(registry, _example("linear.yaml"))
    await asyncio.sleep(0.05)  # the orphan's lease has run out

    engine = Engine(registry, SERVICES, MACROS, _settings(tmp_path))
    said: list[str] = []
    engine.on_resumed = said.append
    await asyncio.wait_for(engine.run(until_submission=mine, resume_abandoned=True), 60)
    assert engine.resumed == said == [orphan]
    assert registry.views.get_submission(mine).status == SS.SUCCESS
    assert registry.views.get_submission(orphan).status == SS.SUCCESS
    assert registry.views.get_submission(waiting).status == SS.ACCEPTED
    assert registry.views.get_submission(retried).status == SS.RUNNING
    # a worker's (or a server's) is left to workers: it may need their services, their paths
    assert registry.views.get_submission(workers).status == SS.RUNNING
    assert all(registry.views.runs(c.chain.id) == []
               for c in registry.views.list_chains(workers)[0])
    assert all(registry.views.runs(c.chain.id) == []
               for c in registry.views.list_chains(retried)[0])
