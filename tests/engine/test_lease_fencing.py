"""An engine whose heartbeat cannot be written stops its tools before its lease ends, and
gives their chains back, so that another engine that takes them over never runs a tool
beside the first one (engine/fencing.py); an engine that could not write its own heartbeats
counts no one else lost until its heartbeats have committed again for a lease."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import time
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import psutil
import pytest
from sqlalchemy import select

from steepy.engine.engine import Engine
from steepy.engine.fencing import LeaseKeeper
from steepy.model import ProcessChain, Submission, Workflow
from steepy.model.attempt import INTERRUPTED
from steepy.model.common import utcnow
from steepy.model.submission import ProcessChainStatus as CS
from steepy.registry import open_registry
from steepy.registry.tables import agents, submissions
from tests.agent.harness import alive
from tests.engine.test_engine import MACROS, SERVICES, _settings, _submit
from tests.engine.test_engine_outages import _lost_connection
from tests.engine.workflows import SLEEPY
from tests.registry.chains import store_chains


def test_judging_waits_a_lease_after_the_engines_own_outage() -> None:
    keeper = LeaseKeeper(lease_s=10, heartbeat_s=2, fences_tools=True, now=0)
    assert keeper.judging(0) and not keeper.lapsing(7.9)  # started: it judges at once
    keeper.beat_failed(2)
    keeper.beat_failed(4)  # the database is back after this
    keeper.beat_ok(6)
    assert not keeper.judging(6) and not keeper.judging(13.9)
    assert keeper.judging(14)  # a lease after its last failure: the others had their turn
    keeper.beat_ok(14)
    assert keeper.judging(20)
    assert keeper.lapsing(14 + 8) and not keeper.lapsing(14 + 7.9)  # lease - heartbeat
    assert not LeaseKeeper(10, 2, fences_tools=False, now=0).lapsing(100)  # one machine
    short = LeaseKeeper(lease_s=10, heartbeat_s=5, fences_tools=True, now=0)
    short.beat_ok(0.01)  # (when the heartbeat committed)
    assert not short.lapsing(5.02) and not short.lapsing(7.5)  # the next round runs
    assert short.lapsing(7.52)  # half a heartbeat late: a lease of two leaves no more room


async def test_the_watch_sleeps_while_heartbeats_commit_and_fences_as_the_lease_lapses(
        ) -> None:
    """An idle engine's watch is not woken twice per heartbeat (issue 31): it sleeps until
    the lease could lapse, and on from there while heartbeats commit; when they stop, the
    tools are fenced as the lease lapses, then every half heartbeat."""
    loop = asyncio.get_running_loop()
    keeper = LeaseKeeper(lease_s=1.0, heartbeat_s=0.1, fences_tools=True, now=loop.time())
    looked, fenced = [], []
    lapsing = keeper.lapsing
    keeper.lapsing = lambda now: looked.append(now) or lapsing(now)  # (counted)
    stop = asyncio.Event()
    watch = asyncio.create_task(keeper.watch(stop, lambda silent_s: fenced.append(silent_s)))
    try:
        for _ in range(15):  # 1.5 s of heartbeats
            await asyncio.sleep(0.1)
            keeper.beat_ok(loop.time())
        assert len(looked) <= 2 and fenced == []  # (every half heartbeat: 30 looks)
        stopped = keeper.last_ok
        while len(fenced) < 3:
            await asyncio.sleep(0.01)
        assert fenced[0] == pytest.approx(0.9, abs=0.05)  # as it lapsed (lease - heartbeat)
        assert fenced[2] - fenced[0] == pytest.approx(0.1, abs=0.05)  # then each half beat
        assert keeper.last_ok == stopped
    finally:
        stop.set()
        await watch


async def test_heartbeats_keep_their_own_time_in_one_thread() -> None:
    """The heartbeats run in one thread that keeps its own time (issue 31: no thread per
    beat, no wake-up of the event loop): they go on while the loop is held up, and the
    beat under way as the engine stops ends first."""
    import threading

    loop = asyncio.get_running_loop()
    keeper = LeaseKeeper(lease_s=1.0, heartbeat_s=0.05, fences_tools=True, now=loop.time())
    threads, ended = [], []

    def write() -> None:
        threads.append(threading.get_ident())
        if len(threads) == 12:
            time.sleep(0.2)  # under way as the engine stops
            ended.append(loop.time())

    stop = asyncio.Event()
    beating = asyncio.create_task(keeper.keep_beating(lambda: write, stop))
    await asyncio.sleep(0.01)
    held_from = loop.time()
    time.sleep(0.4)  # the event loop is held up (a long call that is not awaited)
    assert len(threads) >= 4 and keeper.last_ok > held_from + 0.2
    while len(threads) < 12:
        await asyncio.sleep(0.01)
    stop.set()
    await beating
    assert ended and len(set(threads)) == 1 and threads[0] != threading.get_ident()


async def test_heartbeats_that_end_by_a_bug_end_their_task_with_it() -> None:
    """A bug as the heartbeat is made (not the database failing) is the engine's crash."""
    keeper = LeaseKeeper(lease_s=1.0, heartbeat_s=0.01, fences_tools=True, now=0)

    def broken() -> None:
        raise AttributeError("no agents")

    with pytest.raises(AttributeError, match="no agents"):
        await asyncio.wait_for(keeper.keep_beating(broken, asyncio.Event()), 5)


async def test_a_bug_in_the_heartbeats_write_ends_their_task_with_it() -> None:
    """A heartbeat's write that fails by a bug (not the database) is the engine's crash, not
    a failure to wait out while the tools are stopped every half heartbeat."""
    keeper = LeaseKeeper(lease_s=1.0, heartbeat_s=0.01, fences_tools=True, now=0)

    def write() -> None:
        raise TypeError("a statement of ours")

    with pytest.raises(TypeError, match="a statement of ours"):
        await asyncio.wait_for(keeper.keep_beating(lambda: write, asyncio.Event()), 5)


def _sleepers() -> list[psutil.Process]:
    found = []
    for p in psutil.Process(os.getpid()).children(recursive=True):
        try:
            if p.name() == "sleep" and p.status() != psutil.STATUS_ZOMBIE:
                found.append(p)
        except psutil.Error:
            pass
    return found


def _owner(registry, submission_id: str) -> str | None:
    with registry.db.read() as conn:
        return conn.execute(select(submissions.c.owner).where(
            submissions.c.id == submission_id)).scalar()


async def _until(condition, timeout_s: float = 30) -> None:
    end = asyncio.get_running_loop().time() + timeout_s
    while not condition():
        assert asyncio.get_running_loop().time() < end, "waited in vain"
        await asyncio.sleep(0.05)


@pytest.mark.process
async def test_tools_stop_and_their_chains_go_back_before_the_lease_ends(
        database_url: str, tmp_path: Path, caplog) -> None:
    caplog.set_level(logging.ERROR, logger="steepy.engine.engine")
    registry = open_registry(database_url)
    sid = _submit(registry, SLEEPY)  # a tool of 30 s
    settings = replace(_settings(tmp_path, agents=1), fence_tools=True)  # lease 3 s, beat 0.5 s
    engine = Engine(registry, SERVICES, MACROS, settings)
    task = asyncio.create_task(engine.run())
    try:
        await _until(_sleepers)
        tools = _sleepers()
        failing = [True]

        def unwritable(write):
            def failing_write(*args, **kwargs):  # its heartbeat cannot be written from now on
                if failing:
                    raise _lost_connection("UPDATE agents")
                return write(*args, **kwargs)
            return failing_write

        # (PostgreSQL: the heartbeat goes apart from the rest of the round)
        registry.leases.beat = unwritable(registry.leases.beat)
        registry.leases.heartbeat = unwritable(registry.leases.heartbeat)
        await _until(lambda: not any(alive(p) for p in tools))
        (chain,), _ = registry.views.list_chains(sid)
        await _until(lambda: any(r.status == INTERRUPTED for r in registry.views.runs(chain.chain.id)))
        first = registry.views.runs(chain.chain.id)[0]
        assert first.status == INTERRUPTED
        assert re.fullmatch(r"the heartbeat of its engine could not be written for [23] s",
                            first.error_message)  # (lease - heartbeat: 2.5 s)
        assert re.search(r"its heartbeat could not be written for [23] s \(its lease: 3 s\)",
                         caplog.text)
        failing.clear()  # the database is back: the chain runs again, once
        await _until(lambda: len(registry.views.runs(chain.chain.id)) == 2 and _sleepers())
        assert len(_sleepers()) == 1
    finally:
        engine.stop.set()
        await asyncio.wait_for(task, 30)
        registry.close()


@pytest.mark.process
async def test_after_its_own_outage_an_engine_counts_no_one_lost_for_a_lease(
        tmp_path: Path, caplog) -> None:
    """The database was down for everyone: every engine's heartbeat is old when it comes
    back. One that counted the others lost at once would run their chains beside them."""
    caplog.set_level(logging.CRITICAL)
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    registry.requests.add_submission(Submission(id="s", workflow=Workflow(name="s"), name="s"))
    store_chains(registry, "s", [ProcessChain(id="g", required_capabilities=["gpu"])], None)
    registry.requests.add_submission(Submission(id="t", workflow=Workflow(name="t"), name="t"))
    assert registry.leases.fetch_next_submission("other", lease_s=600, only="t").id == "t"
    settings = replace(_settings(tmp_path, agents=1), lease_s=6)  # heartbeat 0.5 s
    engine = Engine(registry, SERVICES, MACROS, settings)
    task = asyncio.create_task(engine.run())
    try:
        await asyncio.sleep(0.5)
        beat, failing, failed = registry.leases.beat, [True], []

        def down(*args, **kwargs):
            if failing:
                failed.append(1)
                raise _lost_connection("UPDATE agents")
            return beat(*args, **kwargs)

        registry.leases.beat = down
        await _until(lambda: failed)  # its own heartbeat has failed: the outage has begun
        # meanwhile: another engine's agent runs the chain, its heartbeat as old as the outage,
        # and it drives the submission, its lease over
        registry.leases.heartbeat("other", [{"id": "theirs", "capabilities": ["gpu"]}], 6)
        assert registry.queue.claim_chain("theirs", {"gpu"})[0].chain.id == "g"
        with registry.db.write() as conn:
            conn.execute(submissions.update().where(submissions.c.id == "t").values(
                lease_until=utcnow() - timedelta(seconds=60)))
        with registry.db.write() as conn:
            conn.execute(agents.update().values(last_seen=utcnow() - timedelta(seconds=60)))
        await asyncio.sleep(1.0)
        failing.clear()  # back; its own heartbeats commit again: it judges 6 s after the
        await asyncio.sleep(1.5)  # last failure, a heartbeat before this at most
        assert registry.views.get_chain("g").status == CS.RUNNING  # not judged yet
        assert _owner(registry, "t") == "other"  # nor taken over
        await _until(lambda: registry.views.get_chain("g").status == CS.REGISTERED, 15)
        await _until(lambda: _owner(registry, "t") == engine.owner, 15)
    finally:
        engine.stop.set()
        await asyncio.wait_for(task, 30)


async def test_a_run_of_another_machine_waits_until_its_tools_there_surely_stopped(
        tmp_path: Path, caplog) -> None:
    """Its engine, alive but cut off from the database, stops its tools as its lease ends and
    gives them the kill grace period: another machine's engine registers the run again only
    after that (and 2 s for clocks that differ)."""
    from steepy.engine.lostruns import LostRuns

    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    registry.requests.add_submission(Submission(id="s", workflow=Workflow(name="s"), name="s"))
    store_chains(registry, "s", [ProcessChain(id="c")], None)
    registry.leases.heartbeat("far", [{"id": "theirs", "capabilities": [], "host": "far-away"}],
                              10)
    assert registry.queue.claim_chain("theirs")[0].chain.id == "c"
    lost, lease_s, grace_s = LostRuns(logging.getLogger("test")), 10, 5

    async def silent_for(seconds: float) -> list[str]:
        with registry.db.write() as conn:
            conn.execute(agents.update().values(last_seen=utcnow() - timedelta(seconds=seconds)))
        return await lost.round(registry.leases, "me", None, lease_s, False, grace_s)

    assert await silent_for(lease_s + 1) == []  # lost, but its tool may still be stopping
    assert "held back until its tools there have surely stopped" in caplog.text
    assert await silent_for(lease_s + grace_s + 1) == []
    assert await silent_for(lease_s + grace_s + 3) == ["c"]


@pytest.mark.process
@pytest.mark.postgres
async def test_a_long_write_of_the_engines_own_process_does_not_fence_its_tools(
        postgres_url: str, tmp_path: Path) -> None:
    """A write of the engine's own process that holds its submission's row for longer than
    lease - heartbeat (a priority given to 100,000 chains through `steepy serve'): the
    heartbeat commits beside it on PostgreSQL, so the tool runs on (it was stopped and its
    chain given back, as if the engine had lost its database)."""
    registry = open_registry(postgres_url)
    sid = _submit(registry, SLEEPY.replace("value: 30", "value: 7"))
    settings = replace(_settings(tmp_path, agents=1), fence_tools=True)  # lease 3 s, beat 0.5
    engine = Engine(registry, SERVICES, MACROS, settings)
    task = asyncio.create_task(engine.run())
    try:
        await _until(_sleepers)
        before = _last_seen(registry)

        def long_write() -> None:
            with registry.db.write() as conn:
                conn.execute(submissions.update().where(submissions.c.id == sid)
                             .values(priority=5))
                time.sleep(4.5)  # lease - heartbeat is 2.5 s

        def short_write() -> None:  # queued behind it, each in a thread of the loop's pool
            with registry.db.write() as conn:
                conn.execute(submissions.update().where(submissions.c.id == sid)
                             .values(priority=6))

        writes = [asyncio.to_thread(long_write)]
        await asyncio.sleep(0.2)
        pool = min(32, (os.cpu_count() or 1) + 4)  # asyncio's default executor's threads
        writes += [asyncio.to_thread(short_write) for _ in range(pool + 1)]
        await asyncio.gather(*writes)
        assert _last_seen(registry) > before + timedelta(seconds=3)  # beats went on meanwhile
        assert len(_sleepers()) == 1  # its tool runs on
        assert _owner(registry, sid) == engine.owner  # and no one took its submission over
        (chain,), _ = registry.views.list_chains(sid)
        await _until(lambda: registry.views.list_chains(sid)[0][0].status == CS.SUCCESS)
        assert [r.status for r in registry.views.runs(chain.chain.id)] == ["SUCCESS"]
    finally:
        engine.stop.set()
        await asyncio.wait_for(task, 30)
        registry.close()


def _last_seen(registry):
    with registry.db.read() as conn:
        return conn.execute(select(agents.c.last_seen)).scalar()


@pytest.mark.process
@pytest.mark.postgres
async def test_a_heartbeat_under_way_as_the_engine_stops_writes_no_agent_back(
        postgres_url: str, tmp_path: Path) -> None:
    registry = open_registry(postgres_url)
    # a round trip that takes its time: longer than the rest of the engine's wind-down (up to
    # 1.6 s measured), well within the lease it waits for the beat at most
    await _stopped_during_a_beat(registry, tmp_path, lambda: time.sleep(3), lease_s=8)
    await asyncio.sleep(3.5)  # (a beat left running would have committed by now)
    with registry.db.read() as conn:
        assert conn.execute(select(agents.c.id)).all() == []
    registry.close()


async def _stopped_during_a_beat(registry, tmp_path: Path, delay, lease_s: float = 3) -> None:
    """An engine (one agent, heartbeat 0.5 s) stopped while a heartbeat is under way, which
    runs `delay()` first."""
    beat, under_way = registry.leases.heartbeat, asyncio.Event()
    loop = asyncio.get_running_loop()

    def delayed(*args, **kwargs):
        loop.call_soon_threadsafe(under_way.set)
        delay()
        return beat(*args, **kwargs)

    engine = Engine(registry, SERVICES, MACROS,
                    replace(_settings(tmp_path, agents=1), lease_s=lease_s))
    task = asyncio.create_task(engine.run())
    try:
        await asyncio.wait_for(engine.ready.wait(), 30)  # (its first beat is another's)
        registry.leases.heartbeat = delayed
        await asyncio.wait_for(under_way.wait(), 30)
    finally:
        engine.stop.set()
        await asyncio.wait_for(task, 30)


@contextlib.asynccontextmanager
async def _running(registry, tmp_path: Path):
    """An engine with one agent (lease 3 s, heartbeat 0.5 s) until the block ends, then the
    registry closed."""
    engine = Engine(registry, SERVICES, MACROS, _settings(tmp_path, agents=1))
    task = asyncio.create_task(engine.run())
    try:
        yield engine
    finally:
        engine.stop.set()
        await asyncio.wait_for(task, 30)
        registry.close()


def _seen_ago_s(registry) -> float:
    with registry.db.read() as conn:
        seen = conn.execute(select(agents.c.last_seen)).scalar()
    return (utcnow() - seen).total_seconds()


@pytest.mark.process
@pytest.mark.postgres
async def test_heartbeats_go_on_while_the_first_look_for_lost_agents_waits(
        postgres_url: str, tmp_path: Path) -> None:
    """The engine's first round waits for a chain's row that another session holds (a
    priority given to a big submission; a worker cut off mid-way: up to a minute): its
    agents must not look dead meanwhile, or another engine runs their chains beside them."""
    import psycopg

    registry = open_registry(postgres_url)
    registry.requests.add_submission(Submission(id="s", workflow=Workflow(name="s"), name="s"))
    store_chains(registry, "s", [ProcessChain(id="g", required_capabilities=["gpu"])], None)
    holder = psycopg.connect(postgres_url.replace("+psycopg", ""))
    holder.execute("SELECT 1 FROM process_chains WHERE id = 'g' FOR UPDATE")
    async with _running(registry, tmp_path) as engine:  # lease 3 s
        try:
            await asyncio.sleep(4)
            assert not engine.ready.is_set()  # (the round still waits)
            assert _seen_ago_s(registry) < 1.5  # beaten every 0.5 s meanwhile
        finally:
            holder.rollback()
            holder.close()


@pytest.mark.process
@pytest.mark.postgres
async def test_heartbeats_go_on_while_reads_hold_every_pooled_connection(
        postgres_url: str, tmp_path: Path) -> None:
    import threading

    import psycopg

    registry = open_registry(postgres_url)
    release = threading.Event()

    def hold() -> None:
        with registry.db.read() as conn:
            conn.exec_driver_sql("SELECT 1")
            release.wait(30)

    pool = registry.db.engine.pool
    holders = [threading.Thread(target=hold, daemon=True)
               for _ in range(pool.size() + pool._max_overflow + 1)]
    async with _running(registry, tmp_path) as engine:
        try:
            await asyncio.wait_for(engine.ready.wait(), 30)
            for t in holders:
                t.start()
            await asyncio.sleep(4)  # lease - heartbeat is 2.5 s
            with psycopg.connect(postgres_url.replace("+psycopg", "")) as aside:  # unpooled
                ago = aside.execute("SELECT extract(epoch FROM now() - max(last_seen)) "
                                    "FROM agents").fetchone()[0]
            assert ago < 1.5
        finally:
            release.set()
            for t in holders:  # ended before the database is dropped (a holder still
                if t.ident is not None:  # committing then was cut off: a warning, once)
                    t.join(10)


@pytest.mark.process
@pytest.mark.postgres
async def test_a_heartbeat_that_hangs_is_cancelled_as_the_engine_stops(
        postgres_url: str, tmp_path: Path) -> None:
    """A beat that hangs at the server (here: sleeps there) neither holds the process's exit
    nor commits after the engine forgot its agents."""
    import threading

    registry = open_registry(postgres_url)

    def hang_at_the_server() -> None:
        with registry.db.write(notify=False, alone=True) as conn:
            conn.exec_driver_sql("SELECT pg_sleep(60)")

    await _stopped_during_a_beat(registry, tmp_path, hang_at_the_server)
    loop = asyncio.get_running_loop()
    end = loop.time() + 10
    while any(t.name.startswith("heartbeat") for t in threading.enumerate()):
        assert loop.time() < end, "the hanging heartbeat was left running"
        await asyncio.sleep(0.1)
    with registry.db.read() as conn:
        assert conn.execute(select(agents.c.id)).all() == []
    registry.close()


@pytest.mark.process
@pytest.mark.postgres
async def test_a_cancel_that_cannot_reach_the_server_holds_the_stop_up_no_more(
        postgres_url: str, tmp_path: Path, monkeypatch) -> None:
    """The network fell silent as the engine stops: asking the server to cancel the hung
    beat cannot connect either. The engine still stops at once and forgets its agents."""
    import psycopg

    def unreachable(self, timeout: float = 0) -> None:
        time.sleep(30)  # (a connect into a silent network)
        raise psycopg.OperationalError("cancel failed: connect() failed")

    import threading

    monkeypatch.setattr(psycopg.Connection, "cancel_safe", unreachable)
    registry = open_registry(postgres_url)
    hung = threading.Event()
    began = asyncio.get_running_loop().time()
    await _stopped_during_a_beat(registry, tmp_path, lambda: hung.wait(60))
    assert asyncio.get_running_loop().time() - began < 10  # (lease 3 s: not the cancel's 30)
    with registry.db.read() as conn:
        assert conn.execute(select(agents.c.id)).all() == []
    hung.set()  # (the hung beat, once it ends, writes its agent back: left alone)
    await asyncio.sleep(0.5)
    registry.close()
