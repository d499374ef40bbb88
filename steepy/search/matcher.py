"""What a search found, and where the query matched it: Steep's `SearchResult`, `Match` and
`TermMatch`, with fragments of at most 100 characters around the matched terms (Steep's
`search/SearchResultMatcher.kt`, whose fragment rules are followed here)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime

from steepy.model.common import iso_time
from steepy.search.query import TIME_TERMS, Locator, Operator, Query, StringTerm, Term, Type

MAX_FRAGMENT = 100


@dataclass
class SearchResult:
    id: str
    type: Type
    status: str
    name: str | None = None
    error_message: str | None = None  # only where the query looks into error messages
    required_capabilities: list[str] = field(default_factory=list)
    source: str | None = None  # only where the query looks into sources
    start_time: datetime | None = None  # UTC
    end_time: datetime | None = None

    def to_json(self, where: list[Match]) -> dict:
        """The result as GET /search (and `steepy search --json`) shows it, with where the
        query matched it (`matches`)."""
        out: dict = {"id": self.id, "type": self.type.value,
                     "requiredCapabilities": self.required_capabilities, "status": self.status}
        if self.name is not None:
            out["name"] = self.name
        if self.start_time is not None:
            out["startTime"] = iso_time(self.start_time)
        if self.end_time is not None:
            out["endTime"] = iso_time(self.end_time)
        out["matches"] = [m.to_json() for m in where]
        return out


@dataclass
class TermMatch:
    term: str
    indices: list[int] = field(default_factory=list)  # start positions in the fragment

    def to_json(self) -> dict:
        return {"term": self.term, "indices": self.indices} if self.indices else {"term": self.term}


@dataclass
class Match:
    locator: Locator
    fragment: str
    term_matches: list[TermMatch]

    def to_json(self) -> dict:
        return {"locator": self.locator.value, "fragment": self.fragment,
                "termMatches": [m.to_json() for m in self.term_matches]}


def _fold(text: str) -> str:
    """Lower case, one character for one, so positions stay those of `text`."""
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


def _find(value: str, terms: list[str], max_matches: int) -> list[TermMatch]:
    found: list[TermMatch] = []
    folded = _fold(value)
    for term in terms:
        if not term:
            continue
        needle, indices, start = _fold(term), [], 0
        while True:
            i = folded.find(needle, start)
            if i >= 0:
                indices.append(i)
            start = i + len(term)
            if not (start < len(value) and i >= 0):
                break
        if indices:
            found.append(TermMatch(term, indices))
            if len(found) == max_matches:
                break
    return found


def _coalesce(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges, key=lambda r: r[0]):
        if merged and merged[-1][1] >= start:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _fragment(value: str, ranges: list[tuple[int, int]], maximum: int) -> tuple[int, int]:
    """Start and end of an excerpt of `value` of at most `maximum` characters that shows as
    many of the matched ranges as fit, widened to whole words."""
    if len(value) <= maximum:
        return 0, len(value)
    start = ranges[0][0]
    i = len(ranges)
    while i > 0:
        i -= 1
        if ranges[i][1] - start <= maximum:
            break
    end = ranges[i][1]
    if end - start >= maximum:
        return start, end
    rest = maximum - (end - start)
    new_start, new_end = start - math.ceil(rest / 2), end + rest // 2
    if new_start < 0:
        new_start, new_end = 0, maximum
    elif new_end > len(value):
        new_start, new_end = len(value) - maximum, len(value)
    new_start, new_end = max(0, new_start), min(len(value), new_end)
    if new_end < len(value):
        while new_end > end and value[new_end].isalnum():
            new_end -= 1
            if new_start > 0:
                new_start -= 1
    if new_start > 0:
        while new_start < start and value[new_start - 1].isalnum():
            new_start += 1
    return new_start, new_end


def _text_match(value: str, locator: Locator, wanted: dict[Locator, dict[Term, None]],
                maximum: int) -> Match | None:
    if locator not in wanted:
        return None
    terms = [t.value for t in wanted[locator] if isinstance(t, StringTerm)]
    found = _find(value, terms, maximum)
    if not found:
        return None
    ranges = _coalesce([(i, i + len(m.term)) for m in found for i in m.indices])
    start, end = _fragment(value, ranges, maximum)
    while start < len(value) and value[start].isspace():
        start += 1
    while end > start and value[end - 1].isspace():
        end -= 1
    fragment = ("... " if start > 0 else "") + value[start:end] + (
        " ..." if end < len(value) else "")
    within = []
    for m in found:
        indices = [i for i in m.indices if i >= start and i + len(m.term) <= end]
        if indices:
            within.append(TermMatch(m.term, [i - start + 4 for i in indices]
                                    if start > 0 else indices))
    return Match(locator, fragment, within)


def time_matches(value: datetime, term: Term) -> bool:
    """Whether the UTC time `value` satisfies a date, date/time or range term."""
    low, high = term.bounds()  # type: ignore[union-attr]
    op = term.operator  # type: ignore[union-attr]
    if op is Operator.LT:
        return value < low
    if op is Operator.LTE:
        return value < high
    if op is Operator.GTE:
        return value >= low
    if op is Operator.GT:
        return value >= high
    return low <= value < high


def _time_match(value: datetime, locator: Locator,
                wanted: dict[Locator, dict[Term, None]]) -> Match | None:
    terms = [t for t in wanted.get(locator, ()) if isinstance(t, TIME_TERMS)]
    found = [TermMatch(str(t)) for t in terms if time_matches(value, t)]
    return Match(locator, iso_time(value) or "", found) if found else None


def matches(result: SearchResult, query: Query, maximum: int = MAX_FRAGMENT) -> list[Match]:
    """Where `query` matches `result`: one Match per attribute (per capability) it matched."""
    locators = (query.locators or tuple(Locator)) if query.terms else ()
    wanted: dict[Locator, dict[Term, None]] = {loc: dict.fromkeys(query.terms)
                                               for loc in locators}
    for loc, term in query.filters:
        wanted.setdefault(loc, {})[term] = None
    texts: list[tuple[str | None, Locator]] = [
        (result.id, Locator.ID), (result.name, Locator.NAME),
        (result.error_message, Locator.ERROR_MESSAGE),
        *((rc, Locator.REQUIRED_CAPABILITIES) for rc in result.required_capabilities),
        (result.source, Locator.SOURCE), (result.status, Locator.STATUS)]
    found = [_text_match(value, loc, wanted, maximum) for value, loc in texts if value is not None]
    for value, loc in ((result.start_time, Locator.START_TIME),
                       (result.end_time, Locator.END_TIME)):
        if value is not None:
            found.append(_time_match(value, loc, wanted))
    return [m for m in found if m is not None]
