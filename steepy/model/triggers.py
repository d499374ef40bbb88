"""When time-based work is due: a schedule's trigger (a crontab line, read as cron reads it
by `schedule_crontab', or an interval, in a time zone) and the garbage collector's Quartz
cron expression, computed by APScheduler 3's triggers. Stored as a small JSON-able `TriggerSpec`; `fire_times` answers what a downtime
missed."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from steepy.model.durations import (MAX_DURATION_MS, TOO_LONG, DurationError,
                                    format_duration, later, parse_duration, too_long)
from steepy.errors import InputError, Problem
from steepy.model.schedule_crontab import CrontabTrigger, parse_crontab

MIN_INTERVAL_MS = 1000  # shorter intervals would make a schedule a busy loop


@dataclass(frozen=True)
class TriggerSpec:
    """A schedule's trigger as stored: `cron` (a crontab line) or `every` (a duration from
    `anchor` on), in `timezone` (default UTC)."""

    kind: str  # "cron" or "every"
    expression: str  # the crontab line, or the duration as given
    timezone: str = "UTC"
    interval_ms: int | None = None  # every
    anchor: datetime | None = None  # every: the first fire time; later ones follow it

    def build(self) -> BaseTrigger:
        if self.kind == "cron":
            try:
                return CrontabTrigger(parse_crontab(self.expression), self.timezone)
            except ValueError:  # stored before steepy read crontab lines itself (`0 3 last * *')
                return CronTrigger.from_crontab(self.expression, timezone=self.timezone)
        interval_ms = min(self.interval_ms or 0, MAX_DURATION_MS)  # one stored before the rule
        return IntervalTrigger(seconds=interval_ms / 1000, start_date=self.anchor,
                               timezone=self.timezone)

    def describe(self) -> str:
        what = (f"cron `{self.expression}'" if self.kind == "cron"
                else f"every {format_duration(self.interval_ms or 0)}")
        return f"{what} ({self.timezone})"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"timezone": self.timezone}
        if self.kind == "cron":
            out["cron"] = self.expression
        else:
            out["every"] = self.expression
        return out


def _timezone(timezone: str | None, at: Any, problems: list[Problem]) -> str:
    """The time zone given (UTC if none was); a problem, and UTC to check the rest, if it is
    empty or unknown."""
    if timezone is None:
        return "UTC"
    if not timezone.strip():
        problems.append(at("timezone", "is empty; leave it out for UTC"))
        return "UTC"
    try:
        CronTrigger(timezone=timezone)
    except Exception as e:  # noqa: BLE001 - zoneinfo's and tzlocal's errors differ
        problems.append(at("timezone", f"`{timezone}' is not a time zone ({e}); e.g. `UTC' or "
                                       "`Europe/Berlin'"))
        return "UTC"
    return timezone


def _cron(cron: str, tz: str, at: Any, problems: list[Problem]) -> TriggerSpec | None:
    try:
        never = parse_crontab(cron).never_fires()
    except ValueError as e:
        problems.append(at("cron", f"`{cron}' is not a crontab line ({e}); five fields: "
                                   "minute hour day-of-month month day-of-week, e.g. "
                                   "`0 3 * * 1-5', or a macro such as `@daily'"))
        return None
    if never:
        problems.append(at("cron", f"`{cron}' never fires: {never}"))
        return None
    return TriggerSpec("cron", cron, tz)


def _every(every: str, tz: str, now: datetime, at: Any,
           problems: list[Problem]) -> TriggerSpec | None:
    try:
        interval = parse_duration(every)
    except DurationError as e:
        problems.append(at("every", f"`{every}' is not a duration ({e}); e.g. `30s' or `1h'"))
        return None
    if interval < MIN_INTERVAL_MS:
        problems.append(at("every", f"`{every}' is shorter than the shortest interval, 1s"))
    if too_long(interval):
        problems.append(at("every", f"`{every}' {TOO_LONG}"))
    return TriggerSpec("every", every, tz, interval, later(now, interval))


def parse_trigger(cron: str | None, every: str | None, timezone: str | None, now: datetime,
                  request: str | None = None) -> TriggerSpec:
    """The trigger of `--cron EXPR' or `--every DURATION' (exactly one) in `timezone';
    InputError naming the option that is wrong (with `request', the request's field)."""

    def at(field: str, message: str) -> Problem:
        if request is not None:
            return Problem(message, path=field, file=request)
        return Problem(message, file=f"--{field}")

    problems: list[Problem] = []
    tz = _timezone(timezone, at, problems)
    spec = None
    if (cron is None) == (every is None):
        how = "neither was given" if cron is None else "not both"
        if request is not None:
            problems.append(Problem(f"give either `cron' or `every'; {how}", file=request))
        else:
            problems.append(Problem(f"give either a cron expression or an interval; {how}",
                                    file="--cron/--every"))
    elif cron is not None:
        spec = _cron(cron, tz, at, problems)
    else:
        assert every is not None
        spec = _every(every, tz, now, at, problems)
    if problems:
        raise InputError(problems)
    assert spec is not None
    return spec


def first_at_or_after(trigger: BaseTrigger, when: datetime) -> datetime | None:
    return trigger.get_next_fire_time(None, when)


def next_after(trigger: BaseTrigger, when: datetime) -> datetime | None:
    """The first fire time strictly after `when' (a fire time itself)."""
    return trigger.get_next_fire_time(when, when)


def settled_next_fire_time(trigger: BaseTrigger, stored: datetime | None,
                           last_fire: datetime | None,
                           created: datetime | None) -> datetime | None:
    """A schedule's stored next fire time, or, if it is no fire time of its crontab line
    (stored when steepy read weekdays as APScheduler does: `0 0 * * 0' was Monday), the
    line's first fire time after the schedule's last one (else from when it was added), so
    a real time before the stale one still fires, and a time that fired does not again."""
    if stored is None or not isinstance(trigger, CrontabTrigger):
        return stored
    utc = stored.astimezone(UTC)  # == across zones fails in a fold
    found = first_at_or_after(trigger, utc)
    if found is not None and found.astimezone(UTC) == utc:
        return stored
    if last_fire is not None:
        found = next_after(trigger, last_fire)
    elif created is not None:
        found = first_at_or_after(trigger, created)
    return None if found is None else found.astimezone(UTC)


@dataclass
class Missed:
    """What came due between a schedule's next fire time and now."""

    skipped: int  # times older than the grace period: recorded, not fired
    first_skipped: datetime | None
    last_skipped: datetime | None
    fire_at: datetime | None  # the latest due time within the grace period: fired once
    coalesced: int  # due times within the grace period (fired as one)
    next_time: datetime | None  # the first fire time after now


ON_TIME = timedelta(seconds=1)  # a due time seen this soon is on time, whatever the grace
SKIPS_COUNTED = 10_000  # a cron line's skipped times counted one by one, at most


def fire_times(trigger: BaseTrigger, due: datetime, now: datetime, grace: timedelta,
               cap: int = SKIPS_COUNTED) -> Missed:
    """Split the fire times from `due' (the stored next fire time) to `now': those older than
    `grace' are skipped (counted up to `cap', the last of them found however many there
    were), the rest fire once, coalesced. A time seen within `ON_TIME' of it is no missed
    one: with a grace period of 0 (no catching up) every firing was skipped, as the worker
    looks a moment after each. `due' is a fire time of `trigger' (see
    `settled_next_fire_time')."""
    window = now - max(grace, ON_TIME)
    skipped, first_skipped, last_skipped = 0, None, None
    cursor: datetime | None = due
    if due < window:
        cursor = first_at_or_after(trigger, window)  # jumps; a long downtime costs nothing
        first_skipped = due
        if isinstance(trigger, IntervalTrigger):
            step = trigger.interval.total_seconds()
            end = cursor or window
            skipped = max(1, int(round((end - due).total_seconds() / step)))
            last_skipped = due + trigger.interval * (skipped - 1)
        else:
            t: datetime | None = due
            while t is not None and t < window and skipped < cap:
                skipped, last_skipped = skipped + 1, t
                t = next_after(trigger, t)
            if t is not None and t < window:  # more than counted: which was the last
                last_skipped = _last_before(trigger, window, t)
    fire_at, coalesced = None, 0
    while cursor is not None and cursor <= now:
        fire_at, coalesced = cursor, coalesced + 1
        cursor = next_after(trigger, cursor)
    return Missed(skipped, first_skipped, last_skipped, fire_at, coalesced, cursor)


def _last_before(trigger: BaseTrigger, end: datetime, known: datetime) -> datetime:
    """The last fire time of `trigger' before `end', `known' being one: first a span before
    `end' that holds one (an hour, two, four, ...), then, within it, the latest start whose
    first fire time comes before `end' (halving to a second: a crontab line fires at most once
    a minute). Some fifty looks, however long the downtime and however often the line fires;
    a walk from time to time took hundreds of thousands."""
    span = timedelta(hours=1)
    while True:
        low = max(known, end - span)
        found = first_at_or_after(trigger, low)
        if found is not None and found < end:
            break
        if low == known:
            return known
        span *= 2
    high = end  # first_at_or_after(low) comes before `end', that of `high' does not
    while high - low > timedelta(seconds=1):
        middle = low + (high - low) / 2
        found = first_at_or_after(trigger, middle)
        if found is not None and found < end:
            low = middle
        else:
            high = middle
    last = first_at_or_after(trigger, low)
    return known if last is None else last


# ---------------------------------------------------------------- Quartz (Steep's GC cron)

_QUARTZ_DAYS = {str(i + 1): d for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri",
                                                       "sat"))}


def _quartz_weekdays(field: str) -> tuple[str, str]:
    """Quartz's day-of-week field (1 = Sunday, `5L' last Friday, `6#3' third Friday) as
    APScheduler's (day_of_week, day)."""
    last = re.fullmatch(r"(\w+)L", field)
    if last:
        return "*", f"last {_QUARTZ_DAYS.get(last[1], last[1]).lower()}"
    nth = re.fullmatch(r"(\w+)#([1-5])", field)
    if nth:
        suffix = {"1": "st", "2": "nd", "3": "rd"}.get(nth[2], "th")
        return "*", f"{nth[2]}{suffix} {_QUARTZ_DAYS.get(nth[1], nth[1]).lower()}"
    return re.sub(r"(?<![/\d])([1-7])(?!\d)", lambda m: _QUARTZ_DAYS[m[1]], field).lower(), "*"


def quartz_cron(expression: str, timezone: str = "UTC") -> CronTrigger:
    """A Quartz cron expression (`sec min hour day-of-month month day-of-week [year]', with
    `?', `L' and `#') as an APScheduler CronTrigger; ValueError if it is not one."""
    fields = expression.split()
    if len(fields) not in (6, 7):
        raise ValueError(f"expected 6 or 7 fields (seconds minutes hours day-of-month month "
                         f"day-of-week [year]), got {len(fields)}")
    second, minute, hour, dom, month, dow = fields[:6]
    year = fields[6] if len(fields) == 7 else "*"
    if "W" in dom.upper():
        raise ValueError("`W' (nearest weekday) is not supported")
    day = "last" if dom.upper() == "L" else ("*" if dom == "?" else dom)
    day_of_week = "*"
    if dow != "?":
        day_of_week, weekday_day = _quartz_weekdays(dow)
        if weekday_day != "*":
            if day != "*":
                raise ValueError("day-of-month and day-of-week cannot both be set; use `?'")
            day = weekday_day
    return CronTrigger(year=year, month=month.lower(), day=day, day_of_week=day_of_week,
                       hour=hour, minute=minute, second=second, timezone=timezone)
