"""An engine that lost its agents' leases (its heartbeats could not be written for longer
than the lease) may still be running and report what its agents did: what it says late must
not undo what another engine decided meanwhile. A run is closed once, by whoever comes first:
its own end, another engine counting its agent lost, or its engine giving it back. On SQLite
and PostgreSQL."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import event

from steepy.model import ProcessChain, Submission, Workflow
from steepy.model.submission import ProcessChainStatus as CS
from steepy.model.submission import SubmissionStatus as SS
from steepy.registry import Registry, TakenOver, open_registry
from steepy.registry.writes import RoundWrite, RunEnd
from tests.registry.chains import store_chains


@pytest.fixture
def registry(database_url: str) -> Registry:
    registry = open_registry(database_url)
    registry.requests.add_submission(Submission(id="s", workflow=Workflow(name="s"), name="s"))
    store_chains(registry, "s", [ProcessChain(id="c")], None)
    yield registry
    registry.close()


def _runs(registry: Registry) -> list[tuple[int, str, str]]:
    return [(r.run_number, r.agent_id, r.status) for r in registry.views.runs("c")]


def _taken_over(registry: Registry) -> int:
    """Agent A (its engine silent) ran the chain; B's engine counted A lost, and B runs it
    again. Returns A's run number."""
    _, first = registry.queue.claim_chain("A")
    assert registry.leases.release_orphans(["B"]) == ["c"]
    _, second = registry.queue.claim_chain("B")
    assert second == first + 1
    return first


def test_a_late_end_of_a_run_closed_as_lost_changes_nothing(registry: Registry, caplog) -> None:
    first = _taken_over(registry)
    registry.queue.record([RunEnd("c", first, "SUCCESS", CS.SUCCESS, results={"x": ["A"]})], [])
    assert registry.views.get_chain("c").status == CS.RUNNING  # B's run goes on
    assert _runs(registry) == [(1, "A", "AGENT_LOST"), (2, "B", None)]
    kinds = [e["kind"] for e in registry.views.events("s")]
    assert "chain.finished" not in kinds
    assert "run 1 of chain c came after another engine had counted its agent lost" in caplog.text
    registry.queue.record([RunEnd("c", 2, "SUCCESS", CS.SUCCESS, results={"x": ["B"]})], [])
    chain = registry.views.get_chain("c")
    assert (chain.status, chain.results) == (CS.SUCCESS, {"x": ["B"]})
    assert [e["kind"] for e in registry.views.events("s")].count("chain.finished") == 1


def test_a_late_end_before_the_chain_runs_again_leaves_it_to_run(registry: Registry) -> None:
    _, first = registry.queue.claim_chain("A")
    assert registry.leases.release_orphans(["B"]) == ["c"]
    registry.queue.record([RunEnd("c", first, "SUCCESS", CS.SUCCESS, results={"x": ["A"]})], [])
    assert registry.views.get_chain("c").status == CS.REGISTERED
    assert registry.queue.claim_chain("B")[1] == 2


def test_a_run_that_ended_is_not_counted_lost_later(registry: Registry) -> None:
    """Its engine ended the run after another engine had read the open runs, before that one
    wrote: the end stands and the chain does not run again."""
    _, first = registry.queue.claim_chain("A")
    ended = []

    def end_it_now(conn, cursor, statement, *args) -> None:  # right after the look
        if not ended and statement.lstrip().startswith("SELECT runs.chain_id"):
            ended.append(True)
            cursor.connection.cursor().execute(
                "UPDATE runs SET end_time = CURRENT_TIMESTAMP, status = 'SUCCESS'")

    event.listen(registry.db.engine, "after_cursor_execute", end_it_now)
    try:
        assert registry.leases.release_orphans(["B"]) == []
    finally:
        event.remove(registry.db.engine, "after_cursor_execute", end_it_now)
    assert ended
    assert _runs(registry) == [(first, "A", "SUCCESS")]
    assert registry.views.get_chain("c").status == CS.RUNNING  # (its end's own statement)


def test_giving_back_a_run_closed_as_lost_leaves_the_new_run_alone(registry: Registry) -> None:
    """A stopping engine gives its chain back after another engine took it over: the chain
    is not made REGISTERED again under B's run (it would run a third time, beside B's)."""
    first = _taken_over(registry)
    registry.queue.requeue_run("c", first, "its engine stopped")
    assert registry.views.get_chain("c").status == CS.RUNNING
    assert _runs(registry) == [(1, "A", "AGENT_LOST"), (2, "B", None)]


def test_a_controller_round_of_an_engine_whose_submission_was_taken_over_stores_nothing(
        database_url: str) -> None:
    """Engine A drove the submission; its lease ran out and B took it over. A's next round
    (new chains made from what it fed) is refused whole: one engine makes the chains."""
    registry = open_registry(database_url)
    registry.requests.add_submission(Submission(id="s", workflow=Workflow(name="s"), name="s"))
    assert registry.leases.fetch_next_submission("A", lease_s=0).id == "s"
    assert [s.id for s in registry.leases.adopt_submissions("B", 10)] == ["s"]
    late = RoundWrite(1, chains=[ProcessChain(id="twin")], save_state=True, state={"v": 1},
                      owner="A")
    with pytest.raises(TakenOver, match="submission s was taken over by another engine"):
        registry.submissions.controller_round("s", late)
    assert registry.views.list_chains("s")[0] == []
    assert registry.submissions.saved_state("s") == (None, 0)
    with pytest.raises(TakenOver):
        registry.submissions.finish_submission("s", SS.ERROR, "late", owner="A")
    assert registry.views.get_submission("s").status == SS.RUNNING
    mine = RoundWrite(1, chains=[ProcessChain(id="c")], save_state=True, state={"v": 1},
                      owner="B")
    registry.submissions.controller_round("s", mine)
    registry.submissions.finish_submission("s", SS.SUCCESS, owner="B")
    assert registry.views.get_submission("s").status == SS.SUCCESS
    registry.close()


@pytest.mark.postgres
def test_a_transaction_left_open_by_a_cut_off_engine_holds_no_one_up(postgres_url: str) -> None:
    """An engine cut off from the server in the middle of a transaction keeps its locks until
    the server notices. The others skip what it holds instead of waiting (their heartbeats
    queue behind their waits: they would stop their own tools), and the server ends such a
    session within a minute."""
    import threading

    import psycopg

    registry = open_registry(postgres_url)
    registry.requests.add_submission(Submission(id="s", workflow=Workflow(name="s"), name="s"))
    store_chains(registry, "s", [ProcessChain(id="c")], None)
    assert registry.queue.claim_chain("A")[1] == 1
    assert registry.leases.fetch_next_submission("A", lease_s=0).id == "s"
    ghost = psycopg.connect(postgres_url.replace("+psycopg", ""))  # A, cut off mid-way
    ghost.execute("SELECT 1 FROM runs WHERE chain_id = 'c' FOR UPDATE")
    ghost.execute("SELECT 1 FROM submissions WHERE id = 's' FOR UPDATE")
    found: list = []
    looking = threading.Thread(target=lambda: found.extend([
        registry.leases.release_orphans(["B"]),
        [s.id for s in registry.leases.adopt_submissions("B", 10)]]), daemon=True)
    looking.start()
    looking.join(30)
    assert not looking.is_alive(), "B waited for the locks of a transaction nobody will end"
    assert found == [[], []]
    ghost.rollback()
    assert registry.leases.release_orphans(["B"]) == ["c"]
    assert [s.id for s in registry.leases.adopt_submissions("B", 10)] == ["s"]
    with registry.db.read() as conn:
        assert conn.exec_driver_sql("SHOW idle_in_transaction_session_timeout").scalar() == "1min"
        assert conn.exec_driver_sql("SHOW tcp_keepalives_idle").scalar() == "10"
    ghost.close()
    registry.close()


@pytest.mark.postgres
def test_the_urls_own_session_options_take_precedence(postgres_url: str) -> None:
    joiner = "&" if "?" in postgres_url else "?"
    registry = open_registry(
        f"{postgres_url}{joiner}options=-c%20idle_in_transaction_session_timeout%3D300000")
    with registry.db.read() as conn:
        assert conn.exec_driver_sql("SHOW idle_in_transaction_session_timeout").scalar() == "5min"
        assert conn.exec_driver_sql("SHOW tcp_keepalives_idle").scalar() == "10"
    registry.close()


@pytest.mark.postgres
def test_a_heartbeat_waits_for_no_lock_on_its_submissions(postgres_url: str) -> None:
    """A transaction holding a submission's row (a round of the engine's own controller, a
    priority given to 100,000 chains, an engine cut off mid-way): the heartbeat refreshes the
    agents at once and extends that lease at its next beat (it waited, and the engine would
    stop its tools for a heartbeat it could not write)."""
    import threading

    import psycopg
    from sqlalchemy import select

    from steepy.registry.tables import agents, submissions

    registry = open_registry(postgres_url)
    registry.requests.add_submission(Submission(id="s", workflow=Workflow(name="s"), name="s"))
    assert registry.leases.fetch_next_submission("A", lease_s=0).id == "s"

    def lease_and_seen() -> tuple:
        with registry.db.read() as conn:
            return (conn.execute(select(submissions.c.lease_until)).scalar(),
                    conn.execute(select(agents.c.last_seen)).scalar())

    registry.leases.heartbeat("A", [{"id": "a1", "capabilities": []}], 0)  # it runs out now
    lease, seen = lease_and_seen()
    holder = psycopg.connect(postgres_url.replace("+psycopg", ""))
    holder.execute("SELECT 1 FROM submissions WHERE id = 's' FOR UPDATE")
    beating = threading.Thread(target=registry.leases.beat, daemon=True,
                               args=("A", [{"id": "a1", "capabilities": []}], 600, False))
    beating.start()
    beating.join(30)
    assert not beating.is_alive(), "the heartbeat waited for the submission's row"
    held_lease, new_seen = lease_and_seen()
    assert new_seen > seen and held_lease == lease  # the agents at once, that lease not yet
    # its lease ran out, but its engine beats: no one else takes it over, and no one is told
    # that no engine drives it
    assert registry.leases.adopt_submissions("B", lease_s=60) == []
    assert registry.leases.unowned(["s"]) == {}
    holder.rollback()
    registry.leases.beat("A", [{"id": "a1", "capabilities": []}], 600, False)
    assert (lease_and_seen()[0] - lease).total_seconds() > 500  # the next beat extends it
    # a transaction that only stores a chain of it (a key share lock) skips nothing
    holder.execute("INSERT INTO process_chains (id, submission_id, status, priority, "
                   "required_capabilities, chain, cancel_requested, created_time) VALUES "
                   "('new', 's', 'REGISTERED', 0, '[]', '{}', false, now())")
    before = lease_and_seen()[0]
    registry.leases.heartbeat("A", [{"id": "a1", "capabilities": []}], 700)
    assert lease_and_seen()[0] > before
    holder.rollback()
    holder.close()
    registry.close()


def test_a_lease_that_ran_out_is_taken_over_once_its_engine_is_silent(
        registry: Registry) -> None:
    """An engine that died (its agents silent for a lease) or stopped (its agents gone) leaves
    its submissions to the others at once."""
    assert registry.leases.fetch_next_submission("A", lease_s=0).id == "s"
    registry.leases.heartbeat("A", [{"id": "a1", "capabilities": []}], 0)
    assert registry.leases.adopt_submissions("B", lease_s=60) == []  # A beats
    time.sleep(0.3)
    assert [s.id for s in registry.leases.adopt_submissions("B", lease_s=0.2)] == ["s"]
    registry.leases.heartbeat("B", [{"id": "b1", "capabilities": []}], 0)
    registry.leases.forget_agents("B")  # B stops
    assert [s.id for s in registry.leases.adopt_submissions("C", lease_s=60)] == ["s"]
