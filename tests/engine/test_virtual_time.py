"""The engine's parts on an injected clock: a `VirtualClock` moves only when the test advances
it, so an hour's retry delay or an hourly schedule takes no wall time, and a test says exactly
when time passes. (The registry needs a file: SQLite's `sqlite://` is one database per
connection, and the parts read from worker threads.)"""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from pathlib import Path

import pytest

from steepy.agent import AgentConfig, LocalAgent
from steepy.engine.scheduler import Scheduler
from steepy.engine.timekeeper import Timekeeper
from steepy.generator import ProcessChainGenerator
from steepy.model.clock import VirtualClock
from steepy.model.ids import unique_id
from steepy.model.schedule import Schedule
from steepy.model.submission import ProcessChainStatus as CS, Submission
from steepy.model.triggers import parse_trigger
from steepy.model.workflow import Workflow
from steepy.registry import Registry, open_registry
from steepy.registry.leases import SqlLeases
from tests.registry.chains import store_chains
from tests.engine.test_engine import SERVICES, _submit

HOUR = 3600.0


@pytest.fixture
def registry(tmp_path: Path) -> Registry:
    return open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")


async def _until(condition, timeout_s: float = 20.0) -> None:
    end = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < end, "not reached in time"
        await asyncio.sleep(0.01)


# -- the clock itself ---------------------------------------------------------------------------


async def test_time_moves_only_when_advanced() -> None:
    clock = VirtualClock()
    start = clock.now()
    sleeper = asyncio.create_task(clock.sleep(HOUR))
    event = asyncio.Event()
    waiter = asyncio.create_task(clock.wait(event, 2 * HOUR))
    await asyncio.sleep(0.05)
    assert not sleeper.done() and not waiter.done() and clock.deadlines() == [HOUR, 2 * HOUR]
    assert clock.advance(HOUR - 1) == 0
    await asyncio.sleep(0)
    assert not sleeper.done()
    assert clock.advance(1) == 1
    await sleeper
    assert clock.now() - start == timedelta(hours=1) and clock.monotonic() == HOUR
    event.set()  # the event ends a wait before its deadline
    assert await waiter is True
    assert await clock.wait(asyncio.Event(), 0) is False
    timed_out = asyncio.create_task(clock.wait(asyncio.Event(), 10))
    await clock.asleep_until(HOUR + 10)
    clock.advance(10)
    assert await timed_out is False
    with pytest.raises(ValueError):
        clock.advance(-1)


async def test_a_cancelled_wait_is_cancelled_even_as_its_event_fires() -> None:
    clock = VirtualClock()
    for _ in range(20):
        event = asyncio.Event()
        waiter = asyncio.create_task(clock.wait(event, 10))
        await asyncio.sleep(0)
        event.set()
        waiter.cancel()  # in the same instant
        with pytest.raises(asyncio.CancelledError):
            await waiter
    assert clock.deadlines() == []  # nothing left waiting on the clock


# -- the scheduler's retry delay ----------------------------------------------------------------


RETRIED_IN_AN_HOUR = """
api: 4.7.0
retries:
  processChains: {maxAttempts: 2, delay: 1h}
actions:
  - id: f
    type: execute
    service: flaky
    inputs: [{id: fail_times, value: 1}, {id: state, value: "%s"}]
    outputs: [{id: output_file, var: out}]
    retries: {maxAttempts: 1}
"""


@pytest.mark.process
async def test_a_retry_delay_of_an_hour_passes_in_virtual_time(registry, tmp_path) -> None:
    sid = _submit(registry, RETRIED_IN_AN_HOUR % (tmp_path / "attempts"))
    submission = registry.leases.fetch_next_submission("test", 60)
    generator = ProcessChainGenerator(submission.workflow, str(tmp_path / "tmp"),
                                      str(tmp_path / "out"), SERVICES, {})
    store_chains(registry, sid, generator.generate(), generator.persist_state())
    [chain_id] = [c.chain.id for c in registry.views.list_chains(sid)[0]]
    clock = VirtualClock()
    agent = LocalAgent("a", AgentConfig(kill_grace_period_ms=1000, log_dir=tmp_path / "logs"))
    finished: list[str] = []
    scheduler = Scheduler(registry.queue, [agent], finished.append, sweep_s=2.0, clock=clock)
    stop = asyncio.Event()
    running = asyncio.create_task(scheduler.run(stop))
    try:
        # the first run fails: the chain pauses until an hour from now on the clock
        await _until(lambda: registry.views.get_chain(chain_id).status == CS.PAUSED)
        paused = registry.views.get_chain(chain_id)
        assert abs((paused.next_run_at - clock.now()).total_seconds() - HOUR) < 0.01
        # the scheduler sleeps (on the clock) in sweeps; a minute short of the hour it looks
        # and leaves the chain paused
        await clock.asleep_until(0.01)
        clock.advance(HOUR - 60)
        await clock.asleep_until(HOUR - 60 + 0.01)
        assert registry.views.get_chain(chain_id).status == CS.PAUSED
        began = time.monotonic()
        clock.advance(60.01)
        await _until(lambda: registry.views.get_chain(chain_id).status != CS.PAUSED)
        resumed_after_s = time.monotonic() - began
        await _until(lambda: registry.views.get_chain(chain_id).status == CS.SUCCESS)
    finally:
        stop.set()
        scheduler.wake()
        await asyncio.wait_for(running, 20)
    runs = registry.views.runs(chain_id)
    assert [r.status for r in runs] == ["ERROR", "SUCCESS"]
    assert resumed_after_s < 1.0, resumed_after_s  # an hour of the clock: no wall time
    assert finished == [sid, sid]


# -- the timekeeper's schedules -----------------------------------------------------------------


def _hourly(registry: Registry, clock: VirtualClock) -> Schedule:
    workflow = {"api": "4.7.0", "name": "nap", "actions": []}
    submission = Submission(id=unique_id(), workflow=Workflow.from_json(workflow), name="nap")
    trigger = parse_trigger(None, "1h", None, clock.now())  # first: an hour from now
    return registry.schedules.add_schedule(Schedule.of(unique_id(), submission, trigger))


async def test_an_hourly_schedule_fires_in_virtual_time(registry) -> None:
    clock = VirtualClock()
    schedule = _hourly(registry, clock)
    fired: list[float] = []
    timekeeper = Timekeeper(registry, "keeper", grace_s=60, lookup_s=24 * HOUR,
                            on_fired=lambda: fired.append(clock.monotonic()), clock=clock)
    stop = asyncio.Event()
    running = asyncio.create_task(timekeeper.run(stop))
    try:
        # it sleeps until the due time, not polling: one wait, an hour long
        due = await clock.asleep_until(HOUR - 1)
        assert HOUR <= due < HOUR + 0.1 and clock.deadlines() == [due]
        assert fired == [] and registry.views.count_submissions() == 0
        began = time.monotonic()
        clock.advance(due)
        await _until(lambda: fired)
        fired_after_s = time.monotonic() - began
        # and then until the next hour
        following = await clock.asleep_until(due + 1)
        assert abs(following - 2 * HOUR) < 0.1
        clock.advance(following - clock.monotonic())
        await _until(lambda: len(fired) == 2)
    finally:
        stop.set()
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
    assert fired_after_s < 1.0, fired_after_s
    assert registry.views.count_submissions() == 2
    firings = registry.schedules.firings(schedule.id)
    assert [f["outcome"] for f in firings] == ["fired", "fired"]


# -- leases -------------------------------------------------------------------------------------


def test_leases_run_out_on_their_clock(registry) -> None:
    clock = VirtualClock()
    leases = SqlLeases(registry.db, clock)
    leases.heartbeat("engine", [{"id": "a", "capabilities": []}], lease_s=10)
    assert [a["id"] for a in leases.live_agents(10)] == ["a"]
    clock.advance(9)
    assert [a["id"] for a in leases.live_agents(10)] == ["a"]
    clock.advance(2)  # 11 s of silence on the clock, none on the wall
    assert leases.live_agents(10) == []
    assert leases.forget_lost_agents(10) == ["a"]
