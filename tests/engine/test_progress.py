"""Steep's `estimatedProgress`: what a running chain's agent estimates reaches the registry
(at most once a second), the API's chain documents, the timeline and the event bus."""

from __future__ import annotations

import asyncio
import re

from steepy.engine.engine import Engine
from steepy.plugins.kinds import KINDS
from steepy.plugins.loading import Plugin
from steepy.plugins.pluginset import PluginSet, builtin_set
from steepy.registry import open_registry
from tests.engine.test_engine import MACROS, SERVICES, _settings, _submit
import pytest

pytestmark = [pytest.mark.process]

WORKFLOW = """
api: 4.7.0
actions:
  - {type: execute, service: slowprint, inputs: [{id: lines, value: 40}, {id: interval, value: 0.1}]}
"""
LINE = re.compile(r"line (\d+) of (\d+)")


class _LineCounter:
    """A progress estimator plugin of `slowprint`: "line N of M" says N/M."""

    def estimate(self, executable, recent_lines: list[str]) -> float | None:
        found = LINE.search(recent_lines[-1]) if recent_lines else None
        return None if found is None else int(found[1]) / int(found[2])


def _with_estimator() -> PluginSet:
    estimator = Plugin("lines", KINDS["progressEstimator"], _LineCounter(), "test",
                       selector=["slowprint"])
    return PluginSet([*builtin_set().plugins, estimator])


async def test_estimated_progress_while_a_chain_runs(tmp_path, database_url: str) -> None:
    registry = open_registry(database_url)
    sid = _submit(registry, WORKFLOW)
    settings = _settings(tmp_path, agents=1)
    settings.agent.plugins = _with_estimator()
    engine = Engine(registry, SERVICES, MACROS, settings)
    began = asyncio.get_running_loop().time()
    run = asyncio.create_task(engine.run(until_submission=sid))
    seen: list[float] = []
    while not run.done():
        chains, _ = await asyncio.to_thread(registry.views.chain_summaries, sid)
        for chain in chains:
            if chain["status"] == "RUNNING" and "estimatedProgress" in chain:
                one = await asyncio.to_thread(registry.views.chain, chain["id"])
                if one["status"] == "RUNNING":  # it may have ended between the two reads
                    assert one["estimatedProgress"] >= chain["estimatedProgress"]
                seen.append(chain["estimatedProgress"])
        await asyncio.sleep(0.1)
    await run
    took_s = asyncio.get_running_loop().time() - began
    assert registry.views.get_submission(sid).status == "SUCCESS"
    assert len(set(seen)) >= 2 and seen == sorted(seen) and 0 < seen[0] < 1, seen
    chain_id = registry.views.chain_summaries(sid)[0][0]["id"]
    assert "estimatedProgress" not in registry.views.chain(chain_id)  # only while running
    stored = [e["progress"] for e in registry.views.events(sid) if e["kind"] == "chain.progress"]
    # 40 lines in about 4 s: stored at most once a second, not once a line
    assert 2 <= len(stored) <= min(took_s + 1, 39) and stored == sorted(stored), (stored, took_s)
