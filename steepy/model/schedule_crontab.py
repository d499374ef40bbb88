"""A schedule's crontab line, read as cron reads it (`man 5 crontab'): five fields (minute,
hour, day of month, month, day of week) or a macro such as `@daily', turned into an
APScheduler 3 trigger. Cron's meaning, not APScheduler's: 0 and 7 are Sunday, and when both
day fields are restricted (neither starts with `*') a day matches if either field does."""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone as dt_timezone
from zoneinfo import ZoneInfo

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.combining import OrTrigger
from apscheduler.triggers.cron import CronTrigger

MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_abbr) if name}
WEEKDAYS = {"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}
MACROS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
          "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
          "@hourly": "0 * * * *"}
# name, lowest, highest, names
_FIELDS = (("minute", 0, 59, {}), ("hour", 0, 23, {}), ("day of month", 1, 31, {}),
           ("month", 1, 12, MONTHS), ("day of week", 0, 7, WEEKDAYS))
_LONGEST = {m: 29 if m == 2 else calendar.monthrange(2001, m)[1] for m in range(1, 13)}
_APS_WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")  # by cron's number


@dataclass(frozen=True)
class Crontab:
    """The values each field allows (weekdays 0-6, Sunday 0)."""

    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    days_restricted: bool  # the day-of-month field does not start with `*'
    weekdays_restricted: bool
    fixed_time: bool  # neither minute nor hour starts with `*'

    def never_fires(self) -> str | None:
        """Why the line can never fire (`0 0 31 2 *'), or None. With both day fields
        restricted, every named weekday fires; otherwise a day must exist in a month."""
        if self.days_restricted and self.weekdays_restricted:
            return None
        longest = max(_LONGEST[m] for m in self.months)
        if min(self.days) > longest:
            months = ",".join(str(m) for m in sorted(self.months))
            return f"no month it names ({months}) has a day {min(self.days)}"
        return None


def _digits(text: str) -> bool:
    """Whether `text' is a number as cron reads one: ASCII digits (Python's isdigit() takes
    `٣' and `²' too)."""
    return text.isascii() and text.isdigit()


def _number(text: str, name: str, low: int, high: int, names: dict[str, int]) -> int:
    value = names.get(text.lower()) if names else None
    if value is None:
        if not _digits(text):
            hint = f" or a name such as `{next(iter(names))}'" if names else ""
            raise ValueError(f"{name}: `{text}' is not a number{hint}")
        value = int(text)
    if not low <= value <= high:
        raise ValueError(f"{name}: {value} is not between {low} and {high}")
    return value


def _field(text: str, name: str, low: int, high: int, names: dict[str, int]) -> set[int]:
    """The values of one field: lists of `*', numbers, names and ranges, each with an
    optional `/step'."""
    values: set[int] = set()
    for item in text.split(","):
        spread, _, step_text = item.partition("/")
        step = 1
        if step_text:
            if not _digits(step_text) or int(step_text) == 0:
                raise ValueError(f"{name}: the step `{step_text}' is not a number above 0")
            step = int(step_text)
        if spread == "*":
            first, last = low, high
        elif "-" in spread:
            start, _, end = spread.partition("-")
            first = _number(start, name, low, high, names)
            last = _number(end, name, low, high, names)
            if first > last:
                raise ValueError(f"{name}: the range `{spread}' ends before it starts")
        elif step_text:
            raise ValueError(f"{name}: a step follows `*' or a range, not `{spread}'")
        else:
            first = last = _number(spread, name, low, high, names)
        values.update(range(first, last + 1, step))
    return values


def parse_crontab(line: str) -> Crontab:
    """The fields of a crontab line; ValueError saying what is wrong."""
    text = line.strip()
    if text.startswith("@"):
        if text.lower() not in MACROS:
            raise ValueError(f"`{text}' is not one of {', '.join(MACROS)}")
        text = MACROS[text.lower()]
    fields = text.split()
    if len(fields) != 5:
        raise ValueError(f"expected 5 fields, got {len(fields)}")
    minutes, hours, days, months, weekdays = (
        _field(f, *spec) for f, spec in zip(fields, _FIELDS))
    weekdays = {d % 7 for d in weekdays}
    return Crontab(frozenset(minutes), frozenset(hours), frozenset(days), frozenset(months),
                   frozenset(weekdays), not fields[2].startswith("*"),
                   not fields[4].startswith("*"),
                   not fields[0].startswith("*") and not fields[1].startswith("*"))


def _listed(values: frozenset[int], low: int, high: int) -> str:
    if values == frozenset(range(low, high + 1)):
        return "*"
    return ",".join(str(v) for v in sorted(values))


def _weekdays(values: frozenset[int]) -> str:
    return "*" if len(values) == 7 else ",".join(_APS_WEEKDAYS[d] for d in sorted(values))


class CrontabTrigger(BaseTrigger):
    """A crontab line's fire times in a time zone. When the clocks go back, a line with a
    fixed minute and hour fires once, at the first of the two equal wall times (as Vixie
    cron does); a line with `*' in the minute or hour fires in both."""

    __slots__ = ("inner", "zone", "fixed_time", "crontab")

    def __init__(self, crontab: Crontab, timezone: str):
        both = crontab.days_restricted and crontab.weekdays_restricted
        common = {"minute": _listed(crontab.minutes, 0, 59),
                  "hour": _listed(crontab.hours, 0, 23),
                  "month": _listed(crontab.months, 1, 12), "timezone": timezone}
        days, weekdays = _listed(crontab.days, 1, 31), _weekdays(crontab.weekdays)
        self.inner: BaseTrigger
        if both:  # cron's rule: either day field matching is enough
            self.inner = OrTrigger([CronTrigger(day=days, **common),
                                    CronTrigger(day_of_week=weekdays, **common)])
        else:
            self.inner = CronTrigger(day=days, day_of_week=weekdays, **common)
        self.zone = ZoneInfo(timezone)
        self.fixed_time = crontab.fixed_time
        self.crontab = crontab

    def _repeated(self, when: datetime) -> bool:
        """`when' is the second of two equal wall times (the clocks went back)."""
        local = when.astimezone(dt_timezone.utc).astimezone(self.zone)
        return local.fold == 1 and local.replace(fold=0).utcoffset() != local.utcoffset()

    def get_next_fire_time(self, previous_fire_time: datetime | None,
                           now: datetime) -> datetime | None:
        # from just after the previous time, in UTC: APScheduler compares it with its own
        # wall time, and two datetimes in different zones are never equal in a fold
        start = now if previous_fire_time is None else _after(previous_fire_time)
        found = self.inner.get_next_fire_time(None, start.astimezone(dt_timezone.utc))
        while found is not None and self.fixed_time and self._repeated(found):
            found = self.inner.get_next_fire_time(None, _after(found))
        skipped = None if found is None else self._in_gap(start, found)
        return found if skipped is None else skipped

    def _in_gap(self, start: datetime, found: datetime) -> datetime | None:
        """The first time from `start' to before `found' that the inner trigger passed by
        because its wall time did not exist (the clocks went forward at midnight, so
        APScheduler skipped the day): an hour later, as a time in a gap is read."""
        day = start.astimezone(self.zone).date()
        last = found.astimezone(self.zone).date()
        while day <= last:
            if self._matches(day) and _offset(self.zone, day) < _offset(
                    self.zone, day + timedelta(days=1)):  # forward: a gap that day
                for hour in sorted(self.crontab.hours):
                    for minute in sorted(self.crontab.minutes):
                        wall = datetime(day.year, day.month, day.day, hour, minute,
                                        tzinfo=self.zone)
                        real = wall.astimezone(dt_timezone.utc)
                        if real.astimezone(self.zone).replace(tzinfo=None) != wall.replace(
                                tzinfo=None) and start <= real < found:
                            return real
            day += timedelta(days=1)
        return None

    def _matches(self, day: date) -> bool:
        """Cron's day rule for `day'."""
        c = self.crontab
        if day.month not in c.months:
            return False
        by_day = day.day in c.days
        by_weekday = (day.weekday() + 1) % 7 in c.weekdays
        if c.days_restricted and c.weekdays_restricted:
            return by_day or by_weekday
        return by_day and by_weekday

    def __str__(self) -> str:
        return f"crontab[{self.inner}]"


def _offset(zone: ZoneInfo, day: date) -> timedelta:
    return datetime(day.year, day.month, day.day, tzinfo=zone).utcoffset() or timedelta()


def _after(when: datetime) -> datetime:
    """A microsecond after `when' (in UTC: in a zone, + adds to the wall time)."""
    return when.astimezone(dt_timezone.utc) + timedelta(microseconds=1)
