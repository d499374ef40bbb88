"""The registry's schedules on SQLite and PostgreSQL: a due time fires one submission, a
downtime is coalesced (within the grace period) and recorded as skipped (older), paused
schedules do not fire, and engines racing for one due time fire it once."""

from __future__ import annotations

import threading
from datetime import timedelta

from steepy.model.ids import unique_id
from steepy.model.common import utcnow
from steepy.model.schedule import Schedule
from steepy.model.submission import Submission
from steepy.model.workflow import Workflow
from steepy.registry import open_registry
from steepy.model.triggers import parse_trigger, quartz_cron

WORKFLOW = {"api": "4.7.0", "name": "nap", "actions": []}


def _schedule(registry, every: str = "1s", name: str | None = None) -> Schedule:
    submission = Submission(id=unique_id(), workflow=Workflow.from_json(WORKFLOW), name="nap",
                            source="api: 4.7.0\nname: nap\nactions: []\n")
    trigger = parse_trigger(None, every, None, utcnow())
    return registry.schedules.add_schedule(Schedule.of(unique_id(), submission, trigger, name))


def test_a_due_time_fires_one_submission(database_url) -> None:
    registry = open_registry(database_url)
    schedule = _schedule(registry, name="nightly nap")
    due = schedule.next_fire_time
    assert registry.schedules.fire_due(60, now=due - timedelta(milliseconds=1)) == []
    fired = registry.schedules.fire_due(60, now=due)
    assert len(fired) == 1
    submission = registry.views.get_submission(fired[0])
    assert (submission.status, submission.name, submission.source) == (
        "ACCEPTED", "nightly nap", "api: 4.7.0\nname: nap\nactions: []\n")
    event = [e for e in registry.views.events(fired[0]) if e["kind"] == "schedule.fired"][0]
    assert event["schedule"] == schedule.id and event["coalesced"] == 1
    after = registry.schedules.get_schedule(schedule.id)
    assert after.next_fire_time == due + timedelta(seconds=1)
    assert (after.last_fire_time, after.last_submission_id) == (due, fired[0])
    assert registry.schedules.fire_due(60, now=due) == []  # the same due time: nothing
    [firing] = registry.schedules.firings(schedule.id)
    assert (firing["outcome"], firing["count"], firing["submissionId"]) == ("fired", 1, fired[0])


def test_a_downtime_is_coalesced_within_the_grace_period_and_skipped_before(database_url) -> None:
    registry = open_registry(database_url)
    schedule = _schedule(registry)
    due = schedule.next_fire_time
    fired = registry.schedules.fire_due(3, now=due + timedelta(seconds=10))
    assert len(fired) == 1  # due+7 .. due+10 coalesced into one
    fire, skip = registry.schedules.firings(schedule.id)
    assert (fire["outcome"], fire["count"]) == ("fired", 4)
    assert (skip["outcome"], skip["count"]) == ("skipped", 7)  # due .. due+6
    assert registry.schedules.get_schedule(schedule.id).next_fire_time == \
        due + timedelta(seconds=11)
    # a year of downtime costs no more than a minute of it
    later = registry.schedules.fire_due(3, now=due + timedelta(days=365))
    assert len(later) == 1
    assert registry.schedules.firings(schedule.id)[1]["count"] == 365 * 86400 - 11 - 3


def test_paused_schedules_do_not_fire_and_resume_from_now(database_url) -> None:
    registry = open_registry(database_url)
    schedule = _schedule(registry)
    registry.schedules.set_paused(schedule.id, True)
    assert registry.schedules.next_due() is None
    assert registry.schedules.fire_due(60, now=schedule.next_fire_time + timedelta(hours=1)) == []
    resumed = registry.schedules.set_paused(schedule.id, False)
    assert not resumed.paused and resumed.next_fire_time >= utcnow() - timedelta(seconds=1)
    assert registry.schedules.firings(schedule.id) == []  # the paused hour is not skipped


def test_remove_keeps_the_submissions(database_url) -> None:
    registry = open_registry(database_url)
    schedule = _schedule(registry)
    [fired] = registry.schedules.fire_due(60, now=schedule.next_fire_time)
    assert registry.schedules.remove_schedule(schedule.id)
    assert not registry.schedules.remove_schedule(schedule.id)
    assert registry.schedules.get_schedule(schedule.id) is None
    assert registry.schedules.firings(schedule.id) == []
    assert registry.views.get_submission(fired) is not None


def test_engines_racing_for_a_due_time_fire_it_once(database_url) -> None:
    registries = [open_registry(database_url) for _ in range(6)]
    schedules = [_schedule(registries[0]) for _ in range(3)]
    now = max(s.next_fire_time for s in schedules)
    results: list[list[str]] = []
    start = threading.Barrier(len(registries))

    def fire(registry) -> None:
        start.wait()
        results.append(registry.schedules.fire_due(60, now=now))

    threads = [threading.Thread(target=fire, args=(r,)) for r in registries]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    fired = [s for r in results for s in r]
    assert len(fired) == len(set(fired)) == 3  # one per schedule, whoever fired it


def test_a_timer_is_claimed_once_per_due_time(database_url) -> None:
    registry = open_registry(database_url)
    other = open_registry(database_url)
    trigger = quartz_cron("0/10 * * * * ?")  # every 10 s
    now = utcnow().replace(microsecond=0)
    assert registry.schedules.claim_timer("garbageCollector", trigger, "a", now) is None
    due = registry.schedules.timer_due("garbageCollector")
    assert due > now and due.second % 10 == 0
    later = due + timedelta(seconds=35)  # three missed times: one run
    assert registry.schedules.claim_timer("garbageCollector", trigger, "a", later) == due
    assert other.schedules.claim_timer("garbageCollector", trigger, "b", later) is None
    assert registry.schedules.timer_due("garbageCollector") > later
