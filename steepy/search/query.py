"""Steep's search query language, parsed into a typed `Query` (pure: no database here).

A query is a sequence of elements separated by whitespace (reference section 12,
`docs:query-language`; Steep's `search/QueryParser.kt` is a PEG grammar, followed here):

- a term: a word, or an exact phrase in "double" or 'single' quotes (`\\"`, `\\'`, `\\\\`);
- a date `yyyy-MM-dd` or date/time `yyyy-MM-ddTHH:mm[:ss]`, optionally after `<`, `<=`,
  `>` or `>=`, or an inclusive range `a..b` of dates or date/times;
- a locator `in:<attribute>` (where terms are looked for), a type `is:workflow` or
  `is:processchain`, a filter `<attribute>:<term>`.

Attributes: `id`, `name`, `error`/`errormessage`, `rc`/`cap`/`reqcap`/`capability`/
`requiredcapability` and their plurals, `source`, `status`, `start`/`starttime`,
`end`/`endtime`. Anything else is a term (`foo:bar`, `is:running`, an impossible date), so
every text is a valid query. One deliberate difference: Steep's grammar tries `cap` before
`capability`, which makes `capability:x` a plain term there; here it is the filter the
documentation describes.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from enum import Enum
from typing import Union


class Type(Enum):
    """What a result is, in the order results are ranked (workflows first)."""

    WORKFLOW = "workflow"
    PROCESS_CHAIN = "processChain"

    @property
    def priority(self) -> int:
        return 0 if self is Type.WORKFLOW else 1


class Locator(Enum):
    """An attribute of a submission or chain that terms and filters are compared with."""

    ERROR_MESSAGE = "errorMessage"
    ID = "id"
    NAME = "name"
    REQUIRED_CAPABILITIES = "requiredCapabilities"
    SOURCE = "source"
    STATUS = "status"
    START_TIME = "startTime"
    END_TIME = "endTime"


class Operator(Enum):
    LT = "<"
    LTE = "<="
    EQ = ""
    GTE = ">="
    GT = ">"


@dataclass(frozen=True)
class StringTerm:
    value: str

    def __str__(self) -> str:
        return self.value


_EARLIEST = datetime.min.replace(tzinfo=timezone.utc)
_LATEST = datetime.max.replace(tzinfo=timezone.utc)


def _utc(moment: datetime, zone: tzinfo | None) -> datetime:
    """A local date/time of `zone` (None: the system's zone) as UTC; at the ends of the
    calendar (year 1, year 9999) the earliest or latest time there is."""
    try:
        if zone is None:
            return moment.astimezone(timezone.utc)  # a naive value is taken as local time
        return moment.replace(tzinfo=zone).astimezone(timezone.utc)
    except (OverflowError, ValueError):
        return _EARLIEST if moment.year < 5000 else _LATEST


def _plus(moment: datetime, step: timedelta) -> datetime:
    """`moment + step`, or the latest time there is where that would overflow."""
    try:
        return moment + step
    except OverflowError:
        return datetime.max


def _text(moment: datetime, seconds: bool) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S" if seconds else "%Y-%m-%dT%H:%M")


@dataclass(frozen=True)
class DateTerm:
    """A whole day of the query's time zone."""

    value: date
    zone: tzinfo | None = field(default=None, compare=False)
    operator: Operator = Operator.EQ

    def bounds(self) -> tuple[datetime, datetime]:
        start = datetime.combine(self.value, time())
        return _utc(start, self.zone), _utc(_plus(start, timedelta(days=1)), self.zone)

    def __str__(self) -> str:
        return self.operator.value + self.value.isoformat()


@dataclass(frozen=True)
class DateTimeTerm:
    """A minute, or a second with `seconds`, of the query's time zone."""

    value: datetime  # naive: a wall-clock time of `zone`
    zone: tzinfo | None = field(default=None, compare=False)
    seconds: bool = True
    operator: Operator = Operator.EQ

    def bounds(self) -> tuple[datetime, datetime]:
        step = timedelta(seconds=1) if self.seconds else timedelta(minutes=1)
        return _utc(self.value, self.zone), _utc(_plus(self.value, step), self.zone)

    def __str__(self) -> str:
        return self.operator.value + _text(self.value, self.seconds)


@dataclass(frozen=True)
class DateTimeRangeTerm:
    """From the start of one day/minute/second to the end of another, both included.
    A side without time (`*_time` None) is a whole day."""

    from_date: date
    from_time: time | None
    from_seconds: bool
    to_date: date
    to_time: time | None
    to_seconds: bool
    zone: tzinfo | None = field(default=None, compare=False)

    operator = Operator.EQ

    def bounds(self) -> tuple[datetime, datetime]:
        start = datetime.combine(self.from_date, self.from_time or time())
        end = datetime.combine(self.to_date, self.to_time or time())
        if self.to_time is None:
            end = _plus(end, timedelta(days=1))
        else:
            end = _plus(end, timedelta(seconds=1) if self.to_seconds else timedelta(minutes=1))
        return _utc(start, self.zone), _utc(end, self.zone)

    def __str__(self) -> str:
        def side(day: date, clock: time | None, seconds: bool) -> str:
            if clock is None:
                return day.isoformat()
            return _text(datetime.combine(day, clock), seconds)
        return (side(self.from_date, self.from_time, self.from_seconds) + ".."
                + side(self.to_date, self.to_time, self.to_seconds))


TimeTerm = Union[DateTerm, DateTimeTerm, DateTimeRangeTerm]
Term = Union[StringTerm, TimeTerm]
TIME_TERMS = (DateTerm, DateTimeTerm, DateTimeRangeTerm)


@dataclass(frozen=True)
class Query:
    """Terms, filters, locators and types, each in the order first given, without repeats."""

    terms: tuple[Term, ...] = ()
    filters: tuple[tuple[Locator, Term], ...] = ()
    locators: tuple[Locator, ...] = ()
    types: tuple[Type, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.terms or self.filters or self.locators or self.types)


# attribute names; the longest that is followed by the expected character wins
ATTRIBUTES: dict[str, Locator] = {
    "id": Locator.ID, "name": Locator.NAME,
    "error": Locator.ERROR_MESSAGE, "errormessage": Locator.ERROR_MESSAGE,
    **{name: Locator.REQUIRED_CAPABILITIES for name in (
        "rc", "cap", "reqcap", "capability", "requiredcapability", "rcs", "caps", "reqcaps",
        "capabilities", "requiredcapabilities")},
    "source": Locator.SOURCE, "status": Locator.STATUS,
    "start": Locator.START_TIME, "starttime": Locator.START_TIME,
    "end": Locator.END_TIME, "endtime": Locator.END_TIME,
}
_BY_LENGTH = sorted(ATTRIBUTES, key=len, reverse=True)
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_TIME = re.compile(r"([0-9]{2}):([0-9]{2})(?::([0-9]{2}))?")
_ESCAPE = re.compile(r"\\([\"'\\])")


def is_separator(c: str) -> bool:
    """Java's Character.isWhitespace: what separates the elements of a query."""
    if c in "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f":
        return True
    return unicodedata.category(c) in ("Zs", "Zl", "Zp") and c not in "\u00a0\u2007\u202f"


def _trimmed(c: str) -> bool:
    """Kotlin's Char.isWhitespace: what is trimmed from both ends of a query."""
    return is_separator(c) or unicodedata.category(c) in ("Zs", "Zl", "Zp")


class _Parser:
    def __init__(self, text: str, zone: tzinfo | None):
        self.s = text
        self.zone = zone

    # -- small pieces; each returns the position after what it matched, or None
    def ws(self, i: int) -> int | None:
        if i >= len(self.s):
            return i
        if not is_separator(self.s[i]):
            return None
        while i < len(self.s) and is_separator(self.s[i]):
            i += 1
        return i

    def literal(self, i: int, word: str) -> int | None:
        part = self.s[i:i + len(word)]
        if len(part) == len(word) and all(c.lower() == w for c, w in zip(part, word)):
            return i + len(word)
        return None

    def locator(self, i: int, then: str | None) -> tuple[Locator, int] | None:
        """An attribute name at i, followed by `then` (None: whitespace or the end)."""
        for name in _BY_LENGTH:
            j = self.literal(i, name)
            if j is None:
                continue
            if then is None and self.ws(j) is not None or then is not None and self.s.startswith(then, j):
                return ATTRIBUTES[name], j
        return None

    def date(self, i: int) -> tuple[date, int] | None:
        m = _DATE.match(self.s, i)
        if m is None:
            return None
        try:
            return date(int(m[1]), int(m[2]), int(m[3])), m.end()
        except ValueError:
            return None

    def time(self, i: int) -> tuple[time, bool, int] | None:
        """'T' and a time at i: the time, whether it has seconds, the end."""
        if not self.s.startswith("T", i):
            return None
        m = _TIME.match(self.s, i + 1)
        if m is None:
            return None
        try:
            return time(int(m[1]), int(m[2]), int(m[3] or 0)), m[3] is not None, m.end()
        except ValueError:
            return None

    def moment(self, i: int) -> tuple[date, time | None, bool, int] | None:
        found = self.date(i)
        if found is None:
            return None
        day, j = found
        clock = self.time(j)
        if clock is None:
            return day, None, False, j
        return day, clock[0], clock[1], clock[2]

    # -- terms
    def quoted(self, i: int, quote: str) -> tuple[Term, int] | None:
        if not self.s.startswith(quote, i):
            return None
        j = i + 1
        while j < len(self.s):
            c = self.s[j]
            if c == "\\" and j + 1 < len(self.s) and self.s[j + 1] in "\"'\\":
                j += 2
            elif c in (quote, "\\"):
                break
            else:
                j += 1
        if not self.s.startswith(quote, j):
            return None
        end = self.ws(j + 1)
        if end is None:
            return None
        return StringTerm(_ESCAPE.sub(r"\1", self.s[i + 1:j])), end

    def date_time(self, i: int) -> tuple[Term, int] | None:
        operator = Operator.EQ
        for op in (Operator.LTE, Operator.GTE, Operator.LT, Operator.GT):
            if self.s.startswith(op.value, i):
                operator, i = op, i + len(op.value)
                break
        found = self.moment(i)
        if found is None:
            return None
        day, clock, seconds, j = found
        end = self.ws(j)
        if end is None:
            return None
        if clock is None:
            return DateTerm(day, self.zone, operator), end
        return DateTimeTerm(datetime.combine(day, clock), self.zone, seconds, operator), end

    def date_range(self, i: int) -> tuple[Term, int] | None:
        first = self.moment(i)
        if first is None or not self.s.startswith("..", first[3]):
            return None
        second = self.moment(first[3] + 2)
        if second is None:
            return None
        end = self.ws(second[3])
        if end is None:
            return None
        return DateTimeRangeTerm(first[0], first[1], first[2], second[0], second[1], second[2],
                                 self.zone), end

    def word(self, i: int) -> tuple[Term, int]:
        j = i
        while j < len(self.s) and not is_separator(self.s[j]):
            j += 1
        return StringTerm(self.s[i:j]), self.ws(j) or len(self.s)

    def term(self, i: int) -> tuple[Term, int] | None:
        if i >= len(self.s) or is_separator(self.s[i]):
            return None
        return (self.quoted(i, '"') or self.quoted(i, "'") or self.date_time(i)
                or self.date_range(i) or self.word(i))

    # -- elements
    def filter(self, i: int) -> tuple[tuple[Locator, Term], int] | None:
        found = self.locator(i, ":")
        if found is None:
            return None
        term = self.term(found[1] + 1)
        return None if term is None else ((found[0], term[0]), term[1])

    def in_locator(self, i: int) -> tuple[Locator, int] | None:
        j = self.literal(i, "in:")
        if j is None:
            return None
        for quote in ('"', "'"):
            if self.s.startswith(quote, j):
                found = self.locator(j + 1, quote)
                if found is not None:
                    end = self.ws(found[1] + 1)
                    if end is not None:
                        return found[0], end
        found = self.locator(j, None)
        return None if found is None else (found[0], self.ws(found[1]) or len(self.s))

    def type(self, i: int) -> tuple[Type, int] | None:
        j = self.literal(i, "is:")
        if j is None:
            return None
        for kind, word in ((Type.WORKFLOW, "workflow"), (Type.PROCESS_CHAIN, "processchain")):
            for spelling in (f'"{word}"', f"'{word}'", word):
                k = self.literal(j, spelling)
                if k is not None:
                    end = self.ws(k)
                    return None if end is None else (kind, end)
        return None

    def parse(self) -> Query:
        terms: dict[Term, None] = {}
        filters: dict[tuple[Locator, Term], None] = {}
        locators: dict[Locator, None] = {}
        types: dict[Type, None] = {}
        i = 0
        while i < len(self.s):
            if (f := self.filter(i)) is not None:
                filters[f[0]] = None
            elif (loc := self.in_locator(i)) is not None:
                locators[loc[0]] = None
                f = loc
            elif (kind := self.type(i)) is not None:
                types[kind[0]] = None
                f = kind
            else:
                f = self.term(i) or self.word(i)
                terms[f[0]] = None
            i = f[1]
        return Query(tuple(terms), tuple(filters), tuple(locators), tuple(types))


def parse_query(text: str, zone: tzinfo | None = None) -> Query:
    """The query `text` means; dates and times are of `zone` (None: the system's zone)."""
    text = text.replace("\u00a0", " ")
    start, end = 0, len(text)
    while start < end and _trimmed(text[start]):
        start += 1
    while end > start and _trimmed(text[end - 1]):
        end -= 1
    return _Parser(text[start:end], zone).parse()
