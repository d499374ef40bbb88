"""Fire times: Quartz expressions (the garbage collector's cron) as APScheduler triggers, and
what a downtime of a cron schedule skips and coalesces."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from steepy.model.triggers import fire_times, parse_trigger, quartz_cron

MONDAY = datetime(2026, 11, 23, 10, 0, 1, tzinfo=timezone.utc)


@pytest.mark.parametrize("expression,expected", [
    ("0 0 0 * * ?", datetime(2026, 11, 24, 0, 0, 0)),  # Steep's default: daily at midnight
    ("0 15 10 ? * 6L", datetime(2026, 11, 27, 10, 15)),  # the last Friday of the month
    ("0 0 12 ? * 2-6", datetime(2026, 11, 23, 12, 0)),  # weekdays (1 = Sunday)
    ("0 0 12 ? * 1", datetime(2026, 11, 29, 12, 0)),  # Sunday
    ("0 0/5 * * * ?", datetime(2026, 11, 23, 10, 5)),
    ("30 0 8 ? * 2#1 2027", datetime(2027, 1, 4, 8, 0, 30)),  # first Monday, 2027
    ("0 0 0 L * ?", datetime(2026, 11, 30)),
])
def test_quartz_expressions(expression: str, expected: datetime) -> None:
    trigger = quartz_cron(expression)
    assert trigger.get_next_fire_time(None, MONDAY) == expected.replace(tzinfo=timezone.utc)


@pytest.mark.parametrize("expression", ["0 0 * * *", "0 0 0 15W * ?", "0 0 0 1 * 2L", "x y z a b c"])
def test_what_is_not_quartz_is_refused(expression: str) -> None:
    with pytest.raises(ValueError):
        quartz_cron(expression)


def test_a_cron_downtime_skips_the_old_times_and_coalesces_the_recent() -> None:
    spec = parse_trigger("*/10 * * * *", None, "Europe/Berlin", MONDAY)
    trigger = spec.build()
    due = datetime(2026, 11, 23, 8, 0, tzinfo=timezone.utc)
    missed = fire_times(trigger, due, MONDAY + timedelta(minutes=25), timedelta(minutes=12))
    # 08:00 .. 10:10 (< 10:13): 14 skipped; 10:20 fires; next 10:30
    assert (missed.skipped, missed.coalesced) == (14, 1)
    assert missed.fire_at == datetime(2026, 11, 23, 10, 20, tzinfo=timezone.utc)
    assert missed.next_time == datetime(2026, 11, 23, 10, 30, tzinfo=timezone.utc)


def test_an_interval_beyond_the_longest_duration_is_refused_and_never_overflows() -> None:
    """`--every 3000000d' is the option's problem, not an OverflowError; an interval stored
    before the rule builds a trigger of 3650 days."""
    from steepy.errors import InputError
    from steepy.model.triggers import TriggerSpec

    now = datetime(2026, 11, 27, tzinfo=timezone.utc)
    with pytest.raises(InputError) as info:
        parse_trigger(None, "3000000d", None, now)
    assert [p.message for p in info.value.problems] == [
        "`3000000d' is longer than the longest duration steepy accepts, 3650d (about 10 years)"]
    assert parse_trigger(None, "3650d", None, now).anchor == now + timedelta(days=3650)
    stored = TriggerSpec("every", "3000000d", "UTC", 3_000_000 * 86_400_000, now)
    assert stored.build().interval == timedelta(days=3650)


def test_a_grace_period_of_0_fires_what_is_seen_on_time() -> None:
    """A worker looks a moment after each due time: with `gracePeriod: 0s' every firing was
    skipped as older than the grace period, so the schedule never ran."""
    trigger = parse_trigger("0 3 * * *", None, "UTC", MONDAY).build()
    due = datetime(2026, 11, 24, 3, 0, tzinfo=timezone.utc)
    seen = fire_times(trigger, due, due + timedelta(milliseconds=2), timedelta(0))
    assert (seen.skipped, seen.fire_at) == (0, due)
    late = fire_times(trigger, due, due + timedelta(hours=1), timedelta(0))  # a downtime
    assert (late.skipped, late.fire_at) == (1, None)


def test_a_long_downtime_counts_a_bounded_number_and_finds_the_last_skipped() -> None:
    """A minutely line down for 100 days: 144,000 times. Each was counted (in the write
    transaction that records them: seconds), up to 100,000, and the last one recorded was
    the 100,000th, a month before the end of the downtime."""
    trigger = parse_trigger("* * * * *", None, "UTC", MONDAY).build()
    due = datetime(2026, 8, 20, 19, 52, tzinfo=timezone.utc)
    now = datetime(2026, 11, 28, 20, 0, 30, tzinfo=timezone.utc)
    missed = fire_times(trigger, due, now, timedelta(minutes=1), cap=1000)
    assert missed.skipped == 1000 and missed.first_skipped == due
    assert missed.last_skipped == datetime(2026, 11, 28, 19, 59, tzinfo=timezone.utc)
    assert missed.fire_at == datetime(2026, 11, 28, 20, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize("line,last", [
    ("* * * 1-6 *", datetime(2025, 6, 30, 23, 59, tzinfo=timezone.utc)),  # half a year
    ("* * * 1 *", datetime(2025, 1, 31, 23, 59, tzinfo=timezone.utc)),
    ("*/7 2-4 * * *", datetime(2025, 12, 19, 4, 56, tzinfo=timezone.utc)),
])
def test_the_last_skipped_time_is_found_without_a_walk(line: str, last: datetime) -> None:
    """The last skipped time of a line that fires only part of the year was found by walking
    minute by minute from the first span that held one: months of them."""
    start = datetime(2024, 1, 1, tzinfo=timezone.utc)
    trigger = parse_trigger(line, None, "UTC", start).build()
    due = trigger.get_next_fire_time(None, start)
    now = datetime(2025, 12, 20, tzinfo=timezone.utc)
    missed = fire_times(trigger, due, now, timedelta(minutes=1), cap=100)
    assert (missed.skipped, missed.last_skipped) == (100, last)
