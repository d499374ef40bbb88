"""Claim-ahead and group commit (the scheduler's hot path, issue 16): after a short chain an
agent claims its next chain but one while the next runs, so finishing a chain never waits
for the database; still one tool at a time per agent, every end recorded, a cancel of a
chain claimed ahead honoured before it starts, and what was claimed ahead given back when
the engine stops. Group commit itself: tests/registry/test_store.py."""

from __future__ import annotations

import asyncio

import pytest

from steepy.engine.engine import Engine
from steepy.model.submission import ProcessChainStatus as CS, SubmissionStatus as SS
from steepy.engine.scheduler import AHEAD_BELOW_S
from steepy.registry import Registry, open_registry
from tests.conftest import ROOT
from tests.engine.test_engine import MACROS, SERVICES, _run, _settings, _submit

pytestmark = [pytest.mark.process]


@pytest.fixture
def registry(database_url) -> Registry:
    return open_registry(database_url)  # SQLite and PostgreSQL


@pytest.fixture(autouse=True)
def in_project(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)


def _naps(*seconds: float) -> str:
    """Independent actions, one chain each, claimed in this order."""
    actions = "\n".join(f"  - {{id: n{i}, type: execute, service: sleep, "
                        f"inputs: [{{id: seconds, value: {s}}}]}}" for i, s in enumerate(seconds))
    return f"api: 4.7.0\nname: naps\nactions:\n{actions}\n"


def _chains_by_seconds(registry, sid: str) -> dict[str, list]:
    chains, _ = registry.views.list_chains(sid, oldest_first=True)
    out: dict[str, list] = {}
    for c in chains:
        value = str(c.chain.executables[0].arguments[0].variable.value)
        out.setdefault(value, []).append(c)
    return out


def _overlapping_runs(registry, sid: str) -> int:
    """Runs of one agent that began (were claimed) before the agent's previous run ended."""
    chains, _ = registry.views.list_chains(sid)
    runs = sorted((r for c in chains for r in registry.views.runs(c.chain.id)),
                  key=lambda r: r.start_time)
    return sum(1 for before, after in zip(runs, runs[1:])
               if before.agent_id == after.agent_id and after.start_time < before.end_time)


async def test_short_chains_are_claimed_ahead_one_tool_at_a_time(registry, tmp_path) -> None:
    sid = _submit(registry, _naps(*[0] * 12))
    await _run(registry, tmp_path, sid, agents=1)
    assert registry.views.get_submission(sid).status == SS.SUCCESS
    chains, _ = registry.views.list_chains(sid)
    assert [c.status for c in chains] == [CS.SUCCESS] * 12
    assert _overlapping_runs(registry, sid) > 0  # claimed while the one before ran
    # ... but the tools themselves never overlapped: one at a time on the one agent
    attempts = sorted((a for c in chains for a in registry.views.attempts(c.chain.id)),
                      key=lambda a: a["startTime"])
    assert len(attempts) == 12
    for before, after in zip(attempts, attempts[1:]):
        assert before["endTime"] <= after["startTime"], (before, after)
    # every end is on the timeline, once
    kinds = [e["kind"] for e in registry.views.events(sid)]
    assert kinds.count("chain.started") == kinds.count("chain.finished") == 12


async def test_long_chains_are_not_claimed_ahead(registry, tmp_path) -> None:
    """A chain claimed ahead would look RUNNING while it waits: only behind short ones."""
    nap = AHEAD_BELOW_S + 0.3
    sid = _submit(registry, _naps(nap, nap, nap))
    await _run(registry, tmp_path, sid, agents=1)
    assert registry.views.get_submission(sid).status == SS.SUCCESS
    assert _overlapping_runs(registry, sid) == 0


async def test_a_chain_claimed_ahead_and_cancelled_never_starts(registry, tmp_path) -> None:
    sid = _submit(registry, _naps(0, 3, 0.01))
    engine = Engine(registry, SERVICES, MACROS, _settings(tmp_path, agents=1))
    running = asyncio.create_task(engine.run(until_submission=sid))
    try:
        async with asyncio.timeout(30):  # the long nap runs, the last chain is claimed ahead
            while True:
                by = _chains_by_seconds(registry, sid)
                if by and by["3"][0].status == CS.RUNNING and by["0.01"][0].status == CS.RUNNING:
                    break
                await asyncio.sleep(0.02)
        last = by["0.01"][0].chain.id
        assert registry.views.attempts(last) == []  # claimed, not started
        registry.requests.cancel_chain(last)
        await asyncio.wait_for(running, 60)
    finally:
        engine.stop.set()
        await asyncio.gather(running, return_exceptions=True)
    by = _chains_by_seconds(registry, sid)
    assert by["3"][0].status == CS.SUCCESS
    assert by["0.01"][0].status == CS.CANCELLED
    assert registry.views.attempts(last) == []  # its tool never ran


async def test_an_engine_stopping_gives_back_what_it_claimed_ahead(registry, tmp_path,
                                                                   caplog) -> None:
    caplog.set_level("INFO", logger="steepy.engine.scheduler")
    sid = _submit(registry, _naps(0, 30, 0))
    engine = Engine(registry, SERVICES, MACROS, _settings(tmp_path, agents=1))
    running = asyncio.create_task(engine.run())
    try:
        async with asyncio.timeout(30):
            while True:
                by = _chains_by_seconds(registry, sid)
                if by and by["30"][0].status == CS.RUNNING and by["0"][1].status == CS.RUNNING:
                    break
                await asyncio.sleep(0.02)
    finally:
        engine.stop.set()
        await asyncio.wait_for(running, 60)
    by = _chains_by_seconds(registry, sid)
    assert by["0"][0].status == CS.SUCCESS
    # the long nap and the chain claimed ahead are both waiting for the next engine
    for record in (by["30"][0], by["0"][1]):
        assert record.status == CS.REGISTERED
        assert [r.status for r in registry.views.runs(record.chain.id)] == ["INTERRUPTED"]
    assert registry.views.attempts(by["0"][1].chain.id) == []
    # its log says so: `ended CANCELLED' read as if the work had been cancelled
    long = by["30"][0].chain.id
    assert f"chain {long} handed back after " in caplog.text and "this engine stops" in caplog.text
    assert f"chain {long} ended CANCELLED" not in caplog.text


async def test_an_attempt_its_stopping_engine_cut_is_interrupted(registry, tmp_path) -> None:
    """An engine that stops cuts its tools and gives their chains back: the attempt it cut
    is INTERRUPTED, as the run is (the agent had stored it CANCELLED, as if a user had
    cancelled it, and the retry that followed said `attempt 1 was cut (CANCELLED)')."""
    sid = _submit(registry, _naps(30).replace("value: 30}]}", "value: 30}],\n"
                                               "     retries: {maxAttempts: 2}}"))
    engine = Engine(registry, SERVICES, MACROS, _settings(tmp_path, agents=1))
    running = asyncio.create_task(engine.run())
    try:
        async with asyncio.timeout(30):
            while True:
                chains, _ = registry.views.list_chains(sid)
                if chains and registry.views.attempts(chains[0].chain.id):
                    break
                await asyncio.sleep(0.02)
    finally:
        engine.stop.set()
        await asyncio.wait_for(running, 60)
    (record,) = registry.views.list_chains(sid)[0]
    assert record.status == CS.REGISTERED
    assert [r.status for r in registry.views.runs(record.chain.id)] == ["INTERRUPTED"]
    assert [a["outcome"] for a in registry.views.attempts(record.chain.id)] == ["INTERRUPTED"]
