"""What an idle worker's heartbeat costs on PostgreSQL (issue 31): the heartbeat is one round
trip (every agent's row, the leases, BEGIN and COMMIT together), and a round of looking for
what dead engines left that finds nothing is one round trip that writes nothing. Both say
and write what the statement-by-statement versions did (the rows, `stateChangedTime`, the
leases, agents forgotten by another engine written again with their events)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from steepy.events import EventKind
from steepy.model import ProcessChain, Submission, Workflow
from steepy.registry import Registry, open_registry
from steepy.registry.records import utcnow
from steepy.registry.tables import agents, events, process_chains, submissions
from tests.registry.chains import store_chains
from tests.registry.test_postgres_round_trips import _round_trips, _traced

ROWS = [{"id": "a1", "capabilities": ["x"], "chain_id": None, "host": "h", "pid": 7},
        {"id": "a2", "capabilities": [], "chain_id": None, "host": "h", "pid": None}]


@pytest.fixture
def registry(database_url: str) -> Registry:
    registry = open_registry(database_url)
    yield registry
    registry.close()


@pytest.fixture
def pg_registry(postgres_url: str) -> Registry:
    registry = open_registry(postgres_url)
    yield registry
    registry.close()


def _agents(registry: Registry) -> dict[str, dict]:
    with registry.db.read() as conn:
        return {r.id: r._asdict() for r in conn.execute(select(agents)).all()}


def _arrived(registry: Registry) -> list[str]:
    with registry.db.read() as conn:
        return list(conn.execute(select(events.c.data).where(
            events.c.kind == str(EventKind.AGENT_ARRIVED)).order_by(events.c.id)).scalars())


def _running(registry: Registry, owner: str) -> None:
    registry.requests.add_submission(Submission(id="s", workflow=Workflow(name="s")))
    assert registry.leases.fetch_next_submission(owner, lease_s=5).id == "s"


def _lease(registry: Registry) -> object:
    with registry.db.read() as conn:
        return conn.execute(select(submissions.c.lease_until)).scalar()


def test_a_heartbeat_writes_every_agent_and_the_leases(registry: Registry) -> None:
    leases = registry.leases
    _running(registry, "me")
    leases.heartbeat("me", ROWS, 10)
    first = _agents(registry)
    assert sorted(first) == ["a1", "a2"] and len(_arrived(registry)) == 2
    assert first["a1"]["capabilities"] == '["x"]' and first["a1"]["pid"] == 7
    lease = _lease(registry)
    busy = [dict(ROWS[0], chain_id="c"), ROWS[1]]
    leases.heartbeat("me", busy, 60)
    second = _agents(registry)
    assert second["a1"]["chain_id"] == "c" and second["a1"]["last_seen"] > first["a1"]["last_seen"]
    # went busy: its state changed now; the idle one's stays as it was
    assert second["a1"]["state_changed_time"] == second["a1"]["last_seen"]
    assert second["a2"]["state_changed_time"] == first["a2"]["state_changed_time"]
    assert second["a2"]["pid"] is None and second["a2"]["owner"] == "me"
    assert _lease(registry) > lease  # extended by the longer lease
    assert len(_arrived(registry)) == 2  # nobody new


def test_agents_forgotten_by_another_engine_are_written_again(registry: Registry) -> None:
    leases = registry.leases
    leases.heartbeat("me", ROWS, 10)
    with registry.db.write() as conn:  # another engine forgot one (silent for three leases)
        conn.execute(agents.delete().where(agents.c.id == "a2"))
    leases.heartbeat("me", ROWS, 10)
    assert sorted(_agents(registry)) == ["a1", "a2"]
    assert len(_arrived(registry)) == 3 and '"a2"' in _arrived(registry)[-1]


def test_a_round_that_finds_nothing_writes_nothing_and_says_what_the_full_one_does(
        registry: Registry) -> None:
    leases = registry.leases
    leases.heartbeat("me", ROWS, 10)
    registry.requests.add_submission(Submission(id="s", workflow=Workflow(name="s")))
    store_chains(registry, "s", [ProcessChain(id="c", required_capabilities=["x"])])
    assert registry.queue.claim_chain("a1", {"x"})[0].chain.id == "c"
    commits = registry.db.commits
    live, lost, waiting = leases.beat("me", None, 10, True)
    assert registry.db.commits == commits  # nothing was written
    assert [a["id"] for a in live] == ["a1", "a2"] and lost == [] and waiting == []
    assert live == leases.live_agents(10)


def test_a_round_that_finds_a_lost_run_or_a_waiting_chain_still_says_so(
        registry: Registry) -> None:
    leases = registry.leases
    leases.heartbeat("dead", [{"id": "ghost", "capabilities": []}], 10)
    registry.requests.add_submission(Submission(id="s", workflow=Workflow(name="s")))
    store_chains(registry, "s", [ProcessChain(id="c"),
                                 ProcessChain(id="g", required_capabilities=["gpu"])])
    assert registry.queue.claim_chain("ghost")[0].chain.id == "c"
    with registry.db.write() as conn:  # the dead engine fell silent a while ago
        conn.execute(agents.update().values(last_seen=utcnow() - timedelta(seconds=20)))
    leases.heartbeat("me", ROWS[:1], 10)
    live, lost, waiting = leases.beat("me", None, 10, True)
    assert [a["id"] for a in live] == ["a1"]
    assert [(run["chainId"], run["agentId"]) for run in lost] == [("c", "ghost")]
    assert waiting == [("s", "waiting: no agent offers gpu", 1)]
    live, lost, waiting = leases.beat("me", None, 10, True)  # marked once
    assert [run["chainId"] for run in lost] == ["c"] and waiting == []


def test_a_round_while_a_marked_chain_waits_writes_nothing(registry: Registry) -> None:
    """GPU chains waiting while the GPU workers are down: marked once, then every worker's
    round only reads; when an agent offers it, the mark goes."""
    leases = registry.leases
    leases.heartbeat("me", ROWS, 10)
    registry.requests.add_submission(Submission(id="s", workflow=Workflow(name="s")))
    store_chains(registry, "s", [ProcessChain(id="g", required_capabilities=["gpu"])])
    assert leases.beat("me", None, 10, True)[2] == [("s", "waiting: no agent offers gpu", 1)]
    commits = registry.db.commits
    for _ in range(3):
        assert leases.beat("me", None, 10, True)[2] == []
    assert registry.db.commits == commits  # nothing was written
    leases.heartbeat("me", [dict(ROWS[0], capabilities=["gpu"])], 10)
    leases.beat("me", None, 10, True)
    with registry.db.read() as conn:
        assert conn.execute(select(process_chains.c.waiting)).scalar() is None


def test_a_heartbeat_is_one_round_trip(pg_registry: Registry, tmp_path: Path) -> None:
    leases = pg_registry.leases
    _running(pg_registry, "me")
    leases.heartbeat("me", ROWS, 10)  # (the agents' rows are new: written as they come)
    own = pg_registry.db._own.connection.driver_connection  # the heartbeat's connection
    trace = tmp_path / "trace"
    with open(trace, "w") as f:
        own.pgconn.trace(f.fileno())
        leases.heartbeat("me", [dict(ROWS[0], chain_id="c"), ROWS[1]], 10)
        own.pgconn.untrace()
    sent = trace.read_text()
    assert _round_trips(trace) == 1, sent  # one agent's row, the leases and COMMIT were four
    assert "BEGIN" in sent and "UPDATE agents" in sent and "UPDATE submissions" in sent \
        and "COMMIT" in sent
    assert _agents(pg_registry)["a1"]["chain_id"] == "c"


def test_a_round_that_finds_nothing_is_one_round_trip(pg_registry: Registry,
                                                       tmp_path: Path) -> None:
    leases = pg_registry.leases
    leases.heartbeat("me", ROWS, 10)
    with pg_registry.db.read() as conn:  # one connection in the pool, to trace
        conn.exec_driver_sql("SELECT 1")
    found: list = []
    sent = _traced(pg_registry.db, tmp_path / "trace", 1,
                   lambda _: found.append(leases.beat("me", None, 10, True)))
    assert [a["id"] for a in found[0][0]] == ["a1", "a2"]
    # BEGIN, the live agents, the open runs, agents to forget, the kinds of chains that may
    # wait and those marked, COMMIT: eight round trips in a write transaction with a savepoint
    assert _round_trips(tmp_path / "trace") == 1, sent
    assert not [q for q in sent if "SAVEPOINT" in q or "UPDATE" in q or "DELETE" in q]
