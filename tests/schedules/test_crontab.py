"""A schedule's crontab line means what it means to cron (`man 5 crontab'): 0 and 7 are
Sunday, ranges, lists, steps and names; a day matches either day field when both are
restricted; macros such as `@daily'; a line that can never fire is refused; a fixed time
the clocks go back over fires once. All on fixed dates, no waiting."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import update

from steepy.errors import InputError
from steepy.model.ids import unique_id
from steepy.model.schedule import Schedule
from steepy.model.submission import Submission
from steepy.model.triggers import (TriggerSpec, fire_times, next_after, parse_trigger,
                                   settled_next_fire_time)
from steepy.model.workflow import Workflow
from steepy.registry import open_registry
from steepy.registry.tables import schedules

UTC = timezone.utc
SATURDAY = datetime(2026, 11, 28, 0, 0, tzinfo=UTC)  # a Saturday; 2026-11-30 is a Monday


def _times(cron: str, start: datetime = SATURDAY, count: int = 7,
           zone: str = "UTC") -> list[datetime]:
    trigger = parse_trigger(cron, None, zone, start).build()
    found, at = [], trigger.get_next_fire_time(None, start)
    while at is not None and len(found) < count:
        found.append(at.astimezone(UTC))
        at = next_after(trigger, at)
    return found


def _weekdays(cron: str, count: int = 7) -> list[str]:
    return [t.strftime("%a") for t in _times(cron, count=count)]


@pytest.mark.parametrize("cron,days", [
    ("0 3 * * 1-5", ["Mon", "Tue", "Wed", "Thu", "Fri", "Mon", "Tue"]),
    ("0 3 * * mon-fri", ["Mon", "Tue", "Wed", "Thu", "Fri", "Mon", "Tue"]),
    ("0 3 * * 0", ["Sun"] * 7),
    ("0 3 * * 7", ["Sun"] * 7),  # crontab: 0 and 7 are both Sunday
    ("0 3 * * SUN", ["Sun"] * 7),
    ("0 3 * * 1", ["Mon"] * 7),
    ("0 3 * * 5-7", ["Sat", "Sun", "Fri", "Sat", "Sun", "Fri", "Sat"]),
    ("0 3 * * 1,3,5", ["Mon", "Wed", "Fri", "Mon", "Wed", "Fri", "Mon"]),
    ("0 3 * * 1-5/2", ["Mon", "Wed", "Fri", "Mon", "Wed", "Fri", "Mon"]),
    ("0 3 * * */2", ["Sat", "Sun", "Tue", "Thu", "Sat", "Sun", "Tue"]),  # 0,2,4,6
    ("0 3 * * 6,0", ["Sat", "Sun", "Sat", "Sun", "Sat", "Sun", "Sat"]),
])
def test_weekdays_are_crontab_numbers(cron: str, days: list[str]) -> None:
    assert _weekdays(cron) == days


def test_both_day_fields_restricted_fire_when_either_matches() -> None:
    """man 5 crontab: `30 4 1,15 * 5' runs on the 1st and 15th of each month, plus every
    Friday. 2027-01-13 is a Wednesday."""
    start = datetime(2027, 1, 1, tzinfo=UTC)
    days = [t.day for t in _times("0 3 13 * FRI", start, count=7)]
    assert days == [1, 8, 13, 15, 22, 29, 5]  # Fridays and the 13th
    assert [t.day for t in _times("30 4 1,15 * 5", start, count=6)] == [1, 8, 15, 22, 29, 1]
    assert [t.month for t in _times("0 3 13 * *", start, count=3)] == [1, 2, 3]  # 13th only
    # a day field that starts with `*' is not restricted: both must match (Vixie cron)
    fridays_on_odd_days = _times("0 3 */2 * 5", start, count=3)
    assert [(t.day, t.strftime("%a")) for t in fridays_on_odd_days] == [
        (1, "Fri"), (15, "Fri"), (29, "Fri")]


@pytest.mark.parametrize("cron,first", [
    ("@daily", datetime(2026, 11, 29)), ("@midnight", datetime(2026, 11, 29)),
    ("@hourly", datetime(2026, 11, 28, 1)), ("@weekly", datetime(2026, 11, 29)),  # Sunday
    ("@monthly", datetime(2026, 12, 1)), ("@yearly", datetime(2027, 1, 1)),
    ("@annually", datetime(2027, 1, 1)), ("*/15 9-17 * jan,jun *", datetime(2027, 1, 1, 9)),
])
def test_macros_and_names(cron: str, first: datetime) -> None:
    assert _times(cron, SATURDAY + timedelta(seconds=1), count=1) == [first.replace(tzinfo=UTC)]


@pytest.mark.parametrize("cron,message", [
    ("0 0 31 2 *", "`0 0 31 2 *' never fires: no month it names (2) has a day 31"),
    ("0 0 30 2 *", "never fires"),
    ("0 0 31 4,6,9,11 *", "no month it names (4,6,9,11) has a day 31"),
    ("0 3 * * 8", "day of week: 8 is not between 0 and 7"),
    ("60 3 * * *", "minute: 60 is not between 0 and 59"),
    ("0 3 * * 7-1", "the range `7-1' ends before it starts"),
    ("*/0 3 * * *", "the step `0' is not a number above 0"),
    ("0 3 * 5/2 *", "a step follows `*' or a range"),
    ("0 3 last * *", "day of month: `last' is not a number"),
    ("0 3 * * friday", "`friday' is not a number or a name such as `sun'"),
    ("0 \u0663 * * *", "hour: `\u0663' is not a number"),  # an Arabic-Indic 3: cron refuses it
    ("0 \u00b2 * * *", "hour: `\u00b2' is not a number"),  # (int() said 'invalid literal')
    ("0 3 * * */\u00b2", "the step `\u00b2' is not a number above 0"),
    ("0 3 * *", "expected 5 fields, got 4"),
    ("@reboot", "`@reboot' is not one of @yearly"),
])
def test_what_cron_would_refuse_or_never_run_is_refused(cron: str, message: str) -> None:
    with pytest.raises(InputError) as info:
        parse_trigger(cron, None, None, SATURDAY)
    [problem] = info.value.problems
    assert problem.file == "--cron" and message in problem.message, problem.message


@pytest.mark.parametrize("cron,first", [
    ("0 0 29 2 *", datetime(2028, 2, 29)),  # a leap day is a day
    ("0 0 31 2 5", datetime(2027, 2, 5)),  # either day field: every Friday in February
    ("0 0 31 1-2 *", datetime(2027, 1, 31)),
])
def test_rare_lines_that_do_fire_are_taken(cron: str, first: datetime) -> None:
    assert _times(cron, count=1) == [first.replace(tzinfo=UTC)]


def test_a_fixed_time_fires_once_when_the_clocks_go_back() -> None:
    """Europe/Berlin, 2027-10-31: 02:30 happens at 00:30Z (CEST) and again at 01:30Z (CET).
    Vixie cron runs a fixed-time job once; one with `*' in the minute or hour runs in both
    hours. Spring forward (2027-03-28, no 02:30) runs at 03:30 CEST."""
    start = datetime(2027, 10, 30, 12, tzinfo=UTC)
    assert _times("30 2 * * *", start, 3, "Europe/Berlin") == [
        datetime(2027, 10, 31, 0, 30, tzinfo=UTC), datetime(2027, 11, 1, 1, 30, tzinfo=UTC),
        datetime(2027, 11, 2, 1, 30, tzinfo=UTC)]
    assert [t.strftime("%H:%M") for t in _times("*/30 2 * * *", start, 4, "Europe/Berlin")
            ] == ["00:00", "00:30", "01:00", "01:30"]
    assert _times("30 2 * * *", datetime(2027, 3, 27, 12, tzinfo=UTC), 1, "Europe/Berlin") == [
        datetime(2027, 3, 28, 1, 30, tzinfo=UTC)]
    # what the registry does: fire the due time, store the next one
    trigger = parse_trigger("30 2 * * *", None, "Europe/Berlin", start).build()
    due = datetime(2027, 10, 31, 0, 30, tzinfo=UTC)
    missed = fire_times(trigger, due, due + timedelta(seconds=1), timedelta(minutes=1))
    assert (missed.fire_at, missed.next_time) == (due, datetime(2027, 11, 1, 1, 30, tzinfo=UTC))


def test_a_stored_schedule_is_read_with_the_crontab_meaning(tmp_path) -> None:
    """A `1-5' schedule stored when it meant Tuesday to Saturday, due on a Saturday: that
    time fires nothing and the next is Monday. A line crontab does not know but APScheduler
    did (`last') still builds."""
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    workflow = Workflow.from_json({"api": "4.7.0", "name": "nap", "actions": []})
    submission = Submission(id=unique_id(), workflow=workflow, name="nap")
    trigger = parse_trigger("0 3 * * 1-5", None, None, SATURDAY)
    added = registry.schedules.add_schedule(Schedule.of(unique_id(), submission, trigger))
    stale = datetime(2026, 11, 28, 3, tzinfo=UTC)  # Saturday 03:00
    with registry.engine.begin() as conn:
        conn.execute(update(schedules).where(schedules.c.id == added.id)
                     .values(next_fire_time=stale, created_time=SATURDAY))
    assert registry.schedules.fire_due(60, now=stale + timedelta(seconds=1)) == []
    assert registry.schedules.get_schedule(added.id).next_fire_time == datetime(
        2026, 11, 30, 3, tzinfo=UTC)
    old = TriggerSpec("cron", "0 3 last * *").build()
    assert old.get_next_fire_time(None, SATURDAY) == datetime(2026, 11, 30, 3, tzinfo=UTC)
    registry.engine.dispose()


def _stale_sunday(tmp_path, last_fire: datetime | None) -> tuple[object, str]:
    """A `0 0 * * 0' schedule added on Thursday 2026-11-26 and stored when 0 meant Monday:
    due Monday 2026-11-30 00:00."""
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    workflow = Workflow.from_json({"api": "4.7.0", "name": "nap", "actions": []})
    submission = Submission(id=unique_id(), workflow=workflow, name="nap")
    trigger = parse_trigger("0 0 * * 0", None, None, SATURDAY)
    added = registry.schedules.add_schedule(Schedule.of(unique_id(), submission, trigger))
    with registry.engine.begin() as conn:
        conn.execute(update(schedules).where(schedules.c.id == added.id).values(
            next_fire_time=datetime(2026, 11, 30, tzinfo=UTC), last_fire_time=last_fire,
            created_time=datetime(2026, 11, 26, tzinfo=UTC)))
    return registry, added.id


def test_a_stale_stored_time_does_not_hide_an_earlier_real_one(tmp_path) -> None:
    """Sunday 2026-11-29 fires on time although the stored time says Monday; list and
    show give Sunday before anything fires; Monday fires nothing."""
    registry, schedule_id = _stale_sunday(tmp_path, None)
    sunday = datetime(2026, 11, 29, tzinfo=UTC)
    assert registry.schedules.get_schedule(schedule_id).next_fire_time == sunday
    assert [s.next_fire_time for s in registry.schedules.list_schedules()] == [sunday]
    assert registry.schedules.next_due() == sunday
    assert len(registry.schedules.fire_due(60, now=sunday + timedelta(seconds=5))) == 1
    assert registry.schedules.fire_due(60, now=sunday + timedelta(days=1, seconds=5)) == []
    shown = registry.schedules.get_schedule(schedule_id)
    assert (shown.last_fire_time, shown.next_fire_time) == (sunday, sunday + timedelta(days=7))
    assert [f["dueTime"] for f in registry.schedules.firings(schedule_id)] == [
        "2026-11-29T00:00:00Z"]
    registry.engine.dispose()


@pytest.mark.parametrize("last_fire,settled", [
    (datetime(2026, 11, 23, tzinfo=UTC), datetime(2026, 11, 29, tzinfo=UTC)),  # Mon: old
    (datetime(2026, 11, 29, tzinfo=UTC), datetime(2026, 12, 6, tzinfo=UTC)),  # fired: not again
])
def test_a_stale_stored_time_settles_after_the_last_fire(tmp_path, last_fire: datetime,
                                                         settled: datetime) -> None:
    registry, schedule_id = _stale_sunday(tmp_path, last_fire)
    assert registry.schedules.get_schedule(schedule_id).next_fire_time == settled
    assert registry.schedules.next_due() == settled
    registry.engine.dispose()


def test_a_midnight_that_does_not_exist_fires_an_hour_later() -> None:
    """America/Santiago, 2027-09-05: 00:00 (-04) jumps to 01:00 (-03). A midnight line
    fires at 01:00 that day, not the next; a Sunday one loses no week; `*' lines fire
    once at 01:00. Such a time is a fire time a stored schedule keeps."""
    zone, start = "America/Santiago", datetime(2027, 9, 3, 16, tzinfo=UTC)
    one = datetime(2027, 9, 5, 4, tzinfo=UTC)  # 01:00 -03
    assert _times("0 0 * * *", start, 3, zone) == [
        datetime(2027, 9, 4, 4, tzinfo=UTC), one, datetime(2027, 9, 6, 3, tzinfo=UTC)]
    assert _times("30 0 * * *", start, 2, zone)[1] == one + timedelta(minutes=30)
    assert _times("0 0 * * 0", datetime(2027, 9, 1, 16, tzinfo=UTC), 2, zone) == [
        one, datetime(2027, 9, 12, 3, tzinfo=UTC)]
    assert _times("0 * * * *", datetime(2027, 9, 5, 2, 30, tzinfo=UTC), 3, zone) == [
        datetime(2027, 9, 5, 3, tzinfo=UTC), one, datetime(2027, 9, 5, 5, tzinfo=UTC)]
    trigger = parse_trigger("0 0 * * 0", None, zone, start).build()
    assert settled_next_fire_time(trigger, one, None, None) == one
