"""A controller's round is one registry call (`SubmissionStore.controller_round`): it stores
what the last round learnt and reads what the next one needs, in one transaction; and the
controller makes no other registry call per round."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest

from steepy.engine.engine import Engine
from steepy.model import ProcessChain, Submission, Workflow
from steepy.model.submission import ProcessChainStatus as CS
from steepy.registry import Registry, open_registry
from steepy.registry.writes import RoundWrite
from tests.engine.test_engine import MACROS, SERVICES, _example, _settings, _submit


@pytest.fixture
def registry(database_url: str) -> Registry:
    return open_registry(database_url)  # SQLite and PostgreSQL


@pytest.fixture(autouse=True)
def in_project(monkeypatch) -> None:
    from tests.conftest import ROOT

    monkeypatch.chdir(ROOT)  # the examples name their inputs relative to the project


def _submission(registry: Registry, priority: int = 3) -> str:
    registry.requests.add_submission(Submission(id="s", workflow=Workflow(name="s"), name="s",
                                                priority=priority))
    return "s"


def test_a_round_stores_then_reads_in_one_transaction(registry: Registry) -> None:
    sid = _submission(registry)
    view = registry.submissions.controller_round(sid)  # the first round: nothing stored yet
    assert (view.finished, view.cancel_requested, view.priority, view.active) == ([], False, 3,
                                                                                  False)
    assert view.settled
    commits = registry.db.commits
    view = registry.submissions.controller_round(
        sid, RoundWrite(1, chains=[ProcessChain(id="a"), ProcessChain(id="b")], save_state=True,
                        state={"round": 1}))
    assert registry.db.commits == commits + 1  # one transaction
    assert view.active and view.finished == [] and not view.settled
    assert registry.submissions.saved_state(sid) == ({"round": 1}, 1)
    for chain_id in ("a", "b"):
        _, run = registry.queue.claim_chain("agent")
        registry.queue.finish_run(chain_id, run, "SUCCESS", CS.SUCCESS)
    registry.requests.set_submission_priority(sid, 9)
    commits = registry.db.commits
    view = registry.submissions.controller_round(sid)  # nothing to store: a read only
    assert registry.db.commits == commits
    assert [r.chain.id for r in view.finished] == ["a", "b"] and view.priority == 9
    # outcomes fed without the state (it is stored now and then): marked, state unchanged
    view = registry.submissions.controller_round(sid, RoundWrite(2, fed=["a"]))
    assert [r.chain.id for r in view.finished] == ["b"]
    assert registry.submissions.saved_state(sid) == ({"round": 1}, 1)
    # resuming from round 1's state: what was fed after it is read as not fed
    view = registry.submissions.controller_round(sid, None, after_round=1)
    assert [r.chain.id for r in view.finished] == ["a", "b"]
    registry.requests.cancel_submission(sid)
    view = registry.submissions.controller_round(sid, RoundWrite(3, fed=["b"], save_state=True,
                                                                 state={"round": 3}))
    assert view.cancel_requested and view.settled
    assert registry.submissions.saved_state(sid) == ({"round": 3}, 3)


class _Counting:
    """The submission store, counting the calls made to it by name."""

    def __init__(self, store) -> None:
        self.store = store
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str):
        method = getattr(self.store, name)

        def counted(*args, **kwargs):
            self.calls[name] += 1
            return method(*args, **kwargs)

        return counted


@pytest.mark.process
async def test_the_controller_calls_the_registry_once_a_round(registry, tmp_path: Path) -> None:
    sid = _submit(registry, _example("fan-out.yaml"))
    counting = _Counting(registry.submissions)
    registry.submissions = counting
    engine = Engine(registry, SERVICES, MACROS, _settings(tmp_path))
    await asyncio.wait_for(engine.run(until_submission=sid), 60)
    assert registry.views.get_submission(sid).status == "SUCCESS"
    once = {"saved_state", "chain_counts", "cancel_requested", "successful_results",
            "finish_submission"}  # at the start and at the end
    calls = counting.calls
    assert set(calls) == once | {"controller_round"}, calls
    assert all(calls[name] == 1 for name in once), calls
    # split, then the sorts, then cat: at least a round for each step and one to end
    assert calls["controller_round"] >= 4


def test_successful_results_mentioning_a_path_reads_only_those_chains(
        registry: Registry) -> None:
    """At a submission's end only the chains whose results name the output path are read
    (10,000 reused chains need not be decoded); the text is matched as stored (JSON)."""
    sid = _submission(registry)
    registry.submissions.controller_round(sid, RoundWrite(1, chains=[
        ProcessChain(id=c) for c in ("a", "b", "c")], save_state=True, state={}))
    results = {"a": {"x": ["/tmp/work/a"]}, "b": {"y": ['/out/100%_"b"']},
               "c": {"z": ["/OUT/c"]}}
    for _ in results:
        record, run = registry.queue.claim_chain("agent")
        chain_id = record.chain.id
        registry.queue.finish_run(chain_id, run, "SUCCESS", CS.SUCCESS,
                                  results=results[chain_id])
    everything = registry.submissions.successful_results(sid)
    assert everything == list(results.values())
    assert registry.submissions.successful_results(sid, '/out/100%_"') == [results["b"]]
    assert registry.submissions.successful_results(sid, "/out/1000") == []


def test_the_results_at_a_submissions_end_read_only_its_own_chains(registry: Registry) -> None:
    """The end of a submission reads its successful chains through its own index, not the
    successful chains of every submission kept (ORDER BY seq led SQLite to the status index:
    0.19 s at the end of a 10,000-chain rerun with ten earlier ones kept, and growing)."""
    from datetime import datetime, timezone

    from sqlalchemy import event

    from steepy.registry.tables import process_chains

    sid = _submission(registry)
    registry.requests.add_submission(Submission(id="old", workflow=Workflow(name="old")))
    with registry.db.engine.begin() as conn:  # its 2,000 successful chains
        conn.execute(process_chains.insert(), [
            {"id": f"old-{i}", "submission_id": "old", "status": "SUCCESS", "priority": 0,
             "chain": "{}", "results": "{}", "created_time": datetime.now(timezone.utc)}
            for i in range(2000)])
    seen: list[tuple[str, object]] = []
    event.listen(registry.db.engine, "before_cursor_execute",
                 lambda conn, cursor, statement, params, context, many:
                 seen.append((statement, params)))
    assert registry.submissions.successful_results(sid, "/out") == []
    [(statement, params)] = [(s, p) for s, p in seen if "results" in s]
    if registry.db.engine.dialect.name == "postgresql":
        return  # (its planner goes by statistics, which a test's few rows leave unsettled)
    with registry.db.engine.connect() as conn:
        raw = conn.connection.driver_connection
        plan = " ".join(str(row[-1]) for row in raw.execute(
            "EXPLAIN QUERY PLAN " + statement, params))
    assert "ix_chains_status_seq" not in plan and "ix_chains_submission" in plan, plan
