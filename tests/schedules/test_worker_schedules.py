"""Schedules fired by real `steepy worker` processes: each due time once, also while workers
are killed with SIGKILL; after a downtime, missed times within the grace period fire once
and older ones are recorded as skipped; 3 workers on PostgreSQL fire 50 one-second times of five schedules
without a duplicate or a miss."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from steepy.registry import open_registry
from tests.schedules.processes import (NAP, add, assert_each_due_time_once, cli, due_times,
                                       env, stop, wait_for, worker)
import pytest

pytestmark = [pytest.mark.process]


def _fired(db: str, schedule_id: str) -> list:
    return [f for f in open_registry(db).schedules.firings(schedule_id, limit=10_000)
            if f["outcome"] == "fired"]


def test_kill_9_of_workers_loses_and_doubles_no_firing(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'steepy.db'}"
    environment = env(tmp_path, db)
    workflow = tmp_path / "nap.yaml"
    workflow.write_text(NAP)
    workers = [worker(environment, tmp_path / f"w{i}.log") for i in range(2)]
    schedule_id = add(environment, workflow, "--every", "1s", "--name", "heartbeat")
    try:
        for round_number in range(3):  # kill one worker at some moment, start another
            wait_for(lambda: len(_fired(db, schedule_id)) >= 2 * round_number + 2, 15,
                     "firings")
            time.sleep(0.3 * round_number)  # at different moments of a second
            victim = workers.pop(0)
            stop(victim, signal.SIGKILL)
            workers.append(worker(environment, tmp_path / f"w{round_number + 2}.log"))
        count = len(_fired(db, schedule_id))
        wait_for(lambda: len(_fired(db, schedule_id)) >= count + 2, 15, "firings after kills")
    finally:
        for w in workers:
            stop(w)
    fired, skipped, firings = due_times(db, schedule_id)
    # a worker that falls more than a second behind (the suite's load) fires the due times
    # it missed once, coalesced (count > 1): still each due time once, none lost
    assert skipped == []
    assert_each_due_time_once(fired)
    registry = open_registry(db)
    submissions = registry.views.submission_summaries(size=-1)[0]
    assert sorted(s["id"] for s in submissions) == sorted(f["submissionId"] for f in firings)
    assert {s["name"] for s in submissions} == {"heartbeat"}


def test_a_restart_after_a_downtime_fires_once_and_records_the_skipped(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'steepy.db'}"
    environment = env(tmp_path, db, STEEPY_SCHEDULES_GRACEPERIOD="2500ms")
    workflow = tmp_path / "nap.yaml"
    workflow.write_text(NAP)
    schedule_id = add(environment, workflow, "--every", "1s")
    first = worker(environment, tmp_path / "w1.log")
    try:
        wait_for(lambda: len(_fired(db, schedule_id)) >= 2, 15, "firings")
    finally:
        stop(first, signal.SIGKILL)
    time.sleep(5.5)  # five or more due times pass: 3 or more older than the grace period
    second = worker(environment, tmp_path / "w2.log")
    try:
        wait_for(lambda: len(_fired(db, schedule_id)) >= 4, 15, "firings after the restart")
    finally:
        stop(second)
    fired, skipped, firings = due_times(db, schedule_id)
    kinds = [(f["outcome"], f["count"]) for f in reversed(firings)]
    # the downtime's record is the last skip (a worker that starts late may skip some at first)
    skip = max(i for i, (outcome, _) in enumerate(kinds) if outcome == "skipped")
    assert kinds[skip + 1][0] == "fired" and kinds[skip + 1][1] >= 2, kinds  # coalesced
    assert kinds[skip][1] >= 3, kinds
    assert_each_due_time_once(fired + skipped)
    shown = cli(environment, "schedule", "show", schedule_id)
    assert "skipped" in shown and "coalesced" in shown


def test_three_workers_on_postgresql_fire_50_times_once_each(tmp_path: Path,
                                                            postgres_url: str) -> None:
    # five one-second schedules at once: 50 due times in about 10 s, five times the
    # contention of one schedule (every worker wants every due time of every schedule)
    environment = env(tmp_path, postgres_url)
    workflow = tmp_path / "nothing.yaml"
    workflow.write_text("api: 4.7.0\nname: nothing\nactions: []\n")
    workers = [worker(environment, tmp_path / f"w{i}.log") for i in range(3)]
    try:
        schedule_ids = [add(environment, workflow, "--every", "1s") for _ in range(5)]
        wait_for(lambda: sum(len(_fired(postgres_url, s)) for s in schedule_ids) >= 50, 60,
                 "50 firings", step_s=0.5)
    finally:
        for w in workers:
            stop(w)
    total = 0
    for schedule_id in schedule_ids:
        fired, skipped, firings = due_times(postgres_url, schedule_id)
        assert skipped == [] and all(f["count"] == 1 for f in firings)  # 0 coalesced, 0 skipped
        assert_each_due_time_once(fired)  # 0 duplicates, 0 misses
        total += len(fired)
    assert total >= 50
    owners = {e["kind"] for e in open_registry(postgres_url).views.events(
        firings[0]["submissionId"])}
    assert "schedule.fired" in owners
