"""An engine's own loop when the database fails in it (found by a review of the idle
worker's single look): it backs off instead of spinning, a submission it took before the
failure still starts, and a heartbeat commits even when the rest of its round fails (its
leases must hold, or another engine would take over chains that still run)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
from sqlalchemy import event, exc

from steepy.engine.engine import Engine
from steepy.model import ProcessChain, Submission, Workflow
from steepy.registry import open_registry
from steepy.registry.failures import is_database_failure
from tests.engine.test_engine import MACROS, SERVICES, _settings, _submit
from tests.engine.workflows import SLEEPY
from tests.registry.chains import store_chains

pytestmark = [pytest.mark.process]


def _lost_connection(statement: str) -> exc.OperationalError:
    return exc.OperationalError(statement, {}, Exception("server closed the connection"))


async def test_a_failing_heartbeat_is_retried_after_a_back_off_not_at_once(
        tmp_path: Path, caplog) -> None:
    caplog.set_level(logging.CRITICAL)
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    engine = Engine(registry, SERVICES, MACROS, _settings(tmp_path, agents=1))
    calls, beat = [], registry.leases.beat

    def failing(*args, **kwargs):
        if calls is not None:
            calls.append(1)
            raise _lost_connection("UPDATE agents")
        return beat(*args, **kwargs)

    task = asyncio.create_task(engine.run())
    await asyncio.sleep(0.5)
    registry.leases.beat = failing
    engine.changed("submissions")  # something was stored: the engine looks at once
    await asyncio.sleep(2.5)
    failures, calls = len(calls), None  # the database is back
    engine.stop.set()
    await asyncio.wait_for(task, 20)
    # a try per heartbeat (0.5 s) at most, sooner than the back-off (1 s, 2 s, ...): the
    # heartbeat must hold the leases once the database is back (it spun: thousands)
    assert 1 <= failures <= 2.5 / 0.5 + 1
    assert engine.failure is None


async def test_a_submission_taken_before_a_failure_still_starts(tmp_path: Path,
                                                                caplog) -> None:
    caplog.set_level(logging.CRITICAL)
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    engine = Engine(registry, SERVICES, MACROS, _settings(tmp_path, agents=1))
    adopt, armed = registry.leases.adopt_submissions, []

    def adopt_once_failing(*args, **kwargs):
        if armed:
            armed.clear()
            raise _lost_connection("UPDATE submissions")
        return adopt(*args, **kwargs)

    registry.leases.adopt_submissions = adopt_once_failing
    task = asyncio.create_task(engine.run())
    await asyncio.sleep(0.5)
    armed.append(True)
    sid = _submit(registry, SLEEPY)  # taken (RUNNING, this engine's), then the failure
    for _ in range(100):
        await asyncio.sleep(0.1)
        if registry.views.list_chains(sid)[0]:
            break
    engine.stop.set()
    await asyncio.wait_for(task, 30)
    assert registry.views.list_chains(sid)[0], "taken, then dropped: no controller runs it"


def test_a_heartbeat_commits_when_the_rest_of_its_round_fails(database_url) -> None:
    registry = open_registry(database_url)
    registry.requests.add_submission(Submission(id="s", workflow=Workflow(name="s"), name="s"))
    store_chains(registry, "s", [ProcessChain(id="g", required_capabilities=["x"])], None)
    me = [{"id": "mine", "capabilities": []}]
    registry.leases.beat("me", me, 10, False)
    before = registry.leases.live_agents(10)[0]["lastSeen"]

    def deadlocked(*args, **kwargs):
        raise exc.OperationalError("UPDATE process_chains", {}, Exception("deadlock detected"))

    registry.leases._flag = deadlocked
    with pytest.raises(exc.OperationalError):
        registry.leases.beat("me", me, 10, True)
    assert registry.leases.live_agents(10)[0]["lastSeen"] > before


def test_a_round_that_loses_its_connection_says_the_database_failed(database_url) -> None:
    """The connection lost in the middle of the round (PostgreSQL stopped): the failure the
    engine gets is the database's, which it waits out, not SQLAlchemy's complaint about a
    transaction that nobody rolled back (an internal error: the engine stopped)."""
    registry = open_registry(database_url)
    me = [{"id": "mine", "capabilities": []}]

    def lost(conn, *args, **kwargs):
        conn.exec_driver_sql("SELECT no_such_column FROM agents")  # fails, as a lost server

    def disconnect(context) -> None:  # what the driver says when the server went away
        context.is_disconnect = True

    event.listen(registry.db.engine, "handle_error", disconnect)
    registry.leases._flag = lost
    with pytest.raises(exc.DBAPIError) as failed:
        registry.leases.beat("me", me, 10, True)
    assert failed.value.connection_invalidated
    assert is_database_failure(failed.value)
    event.remove(registry.db.engine, "handle_error", disconnect)
    del registry.leases._flag
    assert registry.leases.beat("me", me, 10, True)[0]  # and the next round works


async def test_submissions_taken_over_start_when_the_next_fetch_fails(tmp_path: Path,
                                                                     caplog) -> None:
    """One look takes a new submission and one a dead engine left; the next look for new
    ones fails: both are this engine's now (its heartbeat renews their leases), so both must
    have a controller, or the one left would stay RUNNING with nobody driving it."""
    caplog.set_level(logging.CRITICAL)
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    left = _submit(registry, SLEEPY)
    assert registry.leases.fetch_next_submission("dead", lease_s=0).id == left
    new = _submit(registry, SLEEPY)
    fetch, calls = registry.leases.fetch_next_submission, []

    def second_failing(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise _lost_connection("SELECT submissions")
        return fetch(*args, **kwargs)

    registry.leases.fetch_next_submission = second_failing
    engine = Engine(registry, SERVICES, MACROS, _settings(tmp_path, agents=1))
    task = asyncio.create_task(engine.run())
    for _ in range(150):
        await asyncio.sleep(0.1)
        if all(registry.views.list_chains(sid)[0] for sid in (left, new)):
            break
    engine.stop.set()
    await asyncio.wait_for(task, 30)
    assert len(calls) >= 2
    assert registry.views.list_chains(left)[0], "adopted, then dropped: no controller runs it"
    assert registry.views.list_chains(new)[0]


def test_the_events_of_a_round_that_failed_are_not_written(database_url) -> None:
    """The rest of the round announced chains waiting, then failed: its changes were rolled
    back with its savepoint, and so are its events (the heartbeat's commit wrote them, and
    the next round announced them again)."""
    registry = open_registry(database_url)
    registry.requests.add_submission(Submission(id="s", workflow=Workflow(name="s"), name="s"))
    store_chains(registry, "s", [ProcessChain(id="g", required_capabilities=["x"])], None)
    flag = registry.leases._flag

    def announced_then_deadlocked(conn, *args, **kwargs):
        flag(conn, *args, **kwargs)  # (its event is pending now)
        raise exc.OperationalError("UPDATE process_chains", {}, Exception("deadlock detected"))

    registry.leases._flag = announced_then_deadlocked
    with pytest.raises(exc.OperationalError):
        registry.leases.beat("me", [{"id": "mine", "capabilities": []}], 10, True)
    kinds = [e["kind"] for e in registry.views.events("s")]
    assert "chain.waiting" not in kinds, kinds
    del registry.leases._flag
    assert registry.leases.beat("me", [{"id": "mine", "capabilities": []}], 10, True)[2]
    assert [e["kind"] for e in registry.views.events("s")].count("chain.waiting") == 1
