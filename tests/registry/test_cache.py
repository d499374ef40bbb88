"""The registry's records of reusable work (extensions 15), on SQLite and PostgreSQL: keys
stored with their chains, complete once the chain succeeded, found by the chain key; a
reused chain stored SUCCESS with the earlier results and its marker; the records go with
their submission when the garbage collector deletes it."""

from __future__ import annotations

import pytest

from steepy.model import ProcessChain, Submission, Workflow
from steepy.model.submission import ProcessChainStatus as CS
from steepy.registry import Registry, open_registry
from steepy.registry.cache import CacheWrite, Pending, Reused
from steepy.registry.writes import RoundWrite


@pytest.fixture
def registry(database_url: str) -> Registry:
    return open_registry(database_url)


def _store(registry: Registry, sid: str, chain_ids: list[str], cache: CacheWrite,
           round_number: int = 1) -> None:
    if registry.views.get_submission(sid) is None:
        registry.requests.add_submission(Submission(id=sid, workflow=Workflow(name=sid)))
    registry.submissions.controller_round(sid, RoundWrite(
        round_number, chains=[ProcessChain(c) for c in chain_ids], save_state=True, state={},
        cache=cache))


OUTPUTS = [[{"path": "/out/s1/x", "results": ["/out/s1/x"], "fingerprint": [3, 7]}]]


def test_entries_are_found_once_complete_and_a_reused_chain_is_marked(registry: Registry) -> None:
    _store(registry, "s1", ["c1"], CacheWrite(pending=[Pending("K", "k0", "c1", "e0", 0)]))
    assert registry.cache.lookup(["K"]) == {}  # not succeeded yet
    assert registry.cache.pending(["c1", "other"]) == {"c1": [None]}
    registry.submissions.controller_round("s1", RoundWrite(2, fed=["c1"], cache=CacheWrite(
        completed=[("c1", OUTPUTS)])))
    (found,) = registry.cache.lookup(["K", "unknown"])["K"]
    assert [(e.submission_id, e.chain_id, e.executable_id, e.outputs) for e in found] == [
        ("s1", "c1", "e0", OUTPUTS[0])]
    assert registry.cache.pending(["c1"]) == {}

    _store(registry, "s2", ["c2"], CacheWrite(reused=[Reused("c2", {"x": ["/out/s1/x"]},
                                                             "s1", "c1")]))
    chain = registry.views.get_chain("c2")
    assert (chain.status, chain.results) == (CS.SUCCESS, {"x": ["/out/s1/x"]})
    assert chain.reused == {"submissionId": "s1", "processChainId": "c1"}
    (view_of_round,) = registry.submissions.controller_round("s2").finished  # to be fed
    assert view_of_round.chain.id == "c2"
    kinds = [e["kind"] for e in registry.views.events("s2", 0)]
    assert kinds[-2:] == ["chain.registered", "chain.reused"]


def test_forgotten_entries_and_a_deleted_submission_leave_no_record(registry: Registry) -> None:
    for sid, cid in (("s1", "c1"), ("s2", "c2")):
        _store(registry, sid, [cid], CacheWrite(pending=[Pending("K", "k0", cid, "e0", 0)]))
        registry.submissions.controller_round(sid, RoundWrite(2, fed=[cid], cache=CacheWrite(
            completed=[(cid, OUTPUTS)])))
    assert [c[0].chain_id for c in registry.cache.lookup(["K"])["K"]] == ["c2", "c1"]
    assert registry.cache.forget(["c2"]) == 1
    assert [c[0].chain_id for c in registry.cache.lookup(["K"])["K"]] == ["c1"]
    counts, deleted = registry.housekeeping.delete_submissions(["s1"])
    assert deleted == ["s1"]
    assert counts["cacheEntries"] == 1
    assert registry.cache.lookup(["K"]) == {} and registry.cache.entries("s1") == []


def test_reused_chains_fed_at_once_are_not_read_back_but_fed_again_after_a_crash(
        registry: Registry) -> None:
    """The controller feeds the chains it reused as it stored them (steepy.engine.reuse.
    carried); they are stored fed in the next round, so a controller that takes over after
    the state of round 1 feeds them again."""
    from steepy.engine.reuse import carried
    from tests.registry.earlier import earlier_work

    earlier_work(registry, "s1", "c1")
    write = RoundWrite(1, chains=[ProcessChain("c2")], save_state=True, state={},
                       cache=CacheWrite(reused=[Reused("c2", {"x": ["/a"]}, "s1", "c1")],
                                        feed_round=2))
    registry.requests.add_submission(Submission(id="s2", workflow=Workflow(name="s2")))
    view = registry.submissions.controller_round("s2", write)
    assert view.finished == []  # not read back
    (record,) = carried("s2", write, view).finished
    assert (record.chain.id, record.status, record.results, record.reused) == (
        "c2", CS.SUCCESS, {"x": ["/a"]}, {"submissionId": "s1", "processChainId": "c1"})
    (again,) = registry.submissions.controller_round("s2", after_round=1).finished
    assert again.chain.id == "c2" and again.reused == record.reused
    # stored fed by round 2 already: round 2 does not mark it again (10,000 rows at once)
    assert record.fed_round == 2
    from steepy.engine.controller import Controller

    class Generator:
        default_priority = 0

        def generate(self, *outcomes):
            return []

        def take_skipped(self):
            return {}

        def persist_state(self):
            return {}

    assert Controller._step(Generator(), None, carried("s2", write, view), 2, False).fed == []
    assert Controller._step(Generator(), None, carried("s2", write, view), 3, False).fed == [
        "c2"]
