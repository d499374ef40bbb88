"""What an idle worker reads (issue 31): `ChainQueue.outlook`, the one read an idle scheduler
makes per sweep, says whether a claim would get a chain, as `record` would, and when the
first paused chain is due; it writes nothing, so a sweep that finds nothing commits nothing.
`Leases.beat`, the heartbeat and the look for lost runs in one transaction."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import event

from steepy.model import ProcessChain, Submission, Workflow
from steepy.model.submission import ProcessChainStatus as CS
from steepy.registry import ClaimFor, Registry, open_registry
from steepy.registry.records import utcnow
from steepy.registry.tables import agents
from tests.registry.chains import store_chains


@pytest.fixture
def registry(database_url: str) -> Registry:
    return open_registry(database_url)


def _submit(registry: Registry, sid: str, chains: list[ProcessChain]) -> None:
    registry.requests.add_submission(Submission(id=sid, workflow=Workflow(name=sid), name=sid))
    store_chains(registry, sid, chains, None)


def _claim(caps: set[str] = frozenset(), only: set[str] | None = None) -> ClaimFor:
    return ClaimFor("a", frozenset(caps), None if only is None else frozenset(only))


def test_outlook_says_what_a_claim_would_get_without_writing(registry: Registry) -> None:
    queue = registry.queue
    assert queue.outlook([_claim()]) == (False, None)
    _submit(registry, "s", [ProcessChain(id="gpu", required_capabilities=["gpu"])])
    commits = registry.db.commits
    assert queue.outlook([_claim()]) == (False, None)  # no agent offers gpu
    assert queue.outlook([_claim(), _claim({"gpu"})])[0]
    assert not queue.outlook([_claim({"gpu"}, only={"other"})])[0]
    assert queue.outlook([_claim({"gpu"}, only={"s", "other"})])[0]
    assert not queue.outlook([])[0]  # no idle agent: nothing to claim for
    assert registry.db.commits == commits  # reads only
    assert registry.queue.claim_chain("a", {"gpu"})[0].chain.id == "gpu"
    assert queue.outlook([_claim({"gpu"})]) == (False, None)  # RUNNING now


def test_outlook_tells_when_the_first_paused_chain_is_due(registry: Registry) -> None:
    _submit(registry, "s", [ProcessChain(id="c"), ProcessChain(id="d")])
    due = utcnow() + timedelta(seconds=10)
    for later_s in (5, 0):
        record, run = registry.queue.claim_chain("a")
        registry.queue.finish_run(record.chain.id, run, "ERROR", CS.PAUSED, error_message="boom",
                                  auto_resume_after=due + timedelta(seconds=later_s))
    assert registry.queue.outlook([_claim()]) == (False, due)


def test_a_beat_is_one_transaction_with_what_the_single_calls_say(registry: Registry) -> None:
    """`Leases.beat`: an engine's heartbeat and its look for what dead engines left in one
    transaction (an idle worker's every 2 s on SQLite), saying what the single calls would."""
    leases, clock_now = registry.leases, utcnow()
    leases.heartbeat("dead", [{"id": "ghost", "capabilities": ["gpu"]}], 10)
    _submit(registry, "s", [ProcessChain(id="c"), ProcessChain(id="g", required_capabilities=["x"])])
    assert registry.queue.claim_chain("ghost", {"gpu"})[0].chain.id == "c"
    with registry.db.engine.begin() as conn:  # the dead engine fell silent a minute ago
        conn.execute(agents.update().values(last_seen=clock_now - timedelta(seconds=60)))
    began = []
    event.listen(registry.db.engine, "begin", lambda conn: began.append(1))
    live, lost, waiting = leases.beat("me", [{"id": "mine", "capabilities": []}], 10, True)
    assert len(began) == 1
    assert [a["id"] for a in live] == ["mine"] == [a["id"] for a in leases.live_agents(10)]
    assert [run["chainId"] for run in lost] == ["c"]
    # (what the single call says once the ghost is forgotten: no more `lastSeen`)
    assert _without_last_seen(leases.lost_runs(["mine"])) == _without_last_seen(lost)
    assert lost[0]["lastSeen"] == pytest.approx((clock_now - timedelta(seconds=60)).timestamp())
    assert waiting == [("s", "waiting: no agent offers x", 1)]
    assert [a["id"] for a in leases.live_agents(10 ** 6)] == ["mine"]  # the ghost is forgotten


def _without_last_seen(runs: list[dict]) -> list[dict]:
    return [{k: v for k, v in run.items() if k != "lastSeen"} for run in runs]
