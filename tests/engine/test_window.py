"""The controller keeps a window of chains in flight (generator/window.py): a for-each
registers its chains a window at a time, and the submission ends as without one."""

from __future__ import annotations

import asyncio

import pytest

from steepy.engine.engine import Engine
from steepy.events import EventKind
from steepy.model.submission import SubmissionStatus as SS
from steepy.registry import open_registry
from tests.engine.test_engine import MACROS, SERVICES, _example, _settings, _submit


@pytest.fixture(autouse=True)
def in_project(monkeypatch) -> None:
    from tests.conftest import ROOT

    monkeypatch.chdir(ROOT)  # the example names its input relative to the project


@pytest.mark.process
async def test_a_for_each_runs_a_window_at_a_time(tmp_path) -> None:
    registry = open_registry(f"sqlite:///{tmp_path / 'db'}")
    sid = _submit(registry, _example("fan-out.yaml"))  # a split, 4 sorts, a cat
    engine = Engine(registry, SERVICES, MACROS, _settings(tmp_path))
    engine._controller.chain_window = 2
    await asyncio.wait_for(engine.run(until_submission=sid), 60)
    submission = registry.views.get_submission(sid)
    assert submission.status == SS.SUCCESS, submission.error_message
    joined = [line for path in submission.results["joined"]
              for line in open(path).read().split()]
    numbers = open("workflows/data/numbers.txt").read().split()
    assert sorted(joined, key=int) == sorted(numbers, key=int) and len(numbers) == 10
    # the third sort was registered only after one of the first two had finished
    kinds = [e["kind"] for e in registry.views.events(sid)
             if e["kind"] in (EventKind.CHAIN_REGISTERED, EventKind.CHAIN_FINISHED)]
    registered = [i for i, kind in enumerate(kinds) if kind == EventKind.CHAIN_REGISTERED]
    assert len(registered) == 6
    third_sort = registered[3]  # after the split and two sorts
    assert kinds[:third_sort].count(EventKind.CHAIN_FINISHED) >= 2  # the split and a sort
