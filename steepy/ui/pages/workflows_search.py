"""The search box of `/workflows`: Steep's query language (steepy/search), run through the
registry's search, limited to submissions. Every text parses; what cannot be searched (a date
out of range, a query for process chains only) is reported at its place in the query, like
steepy's other errors: `q:LINE:COLUMN: term: message`."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from steepy.registry.interfaces import ReadViews, Search
from steepy.search import Query, Type, matches, parse_query

ALL = -1  # the registry's "no limit"


@dataclass
class Found:
    """A page of submissions that match, with the total and how many match in each status
    (the status filters' counts during a search); or why the query cannot run."""

    items: list[dict] = field(default_factory=list)
    total: int = 0
    error: str | None = None
    counts: dict[str, int] = field(default_factory=dict)


def zone(name: str | None) -> tzinfo | None:
    """The browser's time zone (an IANA name its script sends), for the query's dates; None
    (the server's zone, as GET /search) when absent or unknown."""
    if not name:
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None


def _located(text: str, needle: str, message: str) -> str:
    """`q:line:column: needle: message`, at the first place `needle` is in `text`."""
    at = text.lower().find(needle.lower())
    at = max(at, 0)
    line = text.count("\n", 0, at) + 1
    column = at - (text.rfind("\n", 0, at) + 1) + 1
    return f"q:{line}:{column}: {needle}: {message}"


def problem(text: str, query: Query) -> str | None:
    """Why `query` (parsed from `text`) cannot list submissions, located in `text`."""
    if query.types and Type.WORKFLOW not in query.types:
        return _located(text, "is:processchain", "this list shows workflows; the Search "
                                                 "page (/search) finds process chains")
    return None


def _summary(views: ReadViews, submission_id: str) -> dict | None:
    found = views.submission(submission_id, with_workflow=False)
    if found is not None:
        found.pop("results", None)
        found.pop("errorMessage", None)
    return found


def _where(result, query: Query) -> list[dict]:
    """Where the query matched, beyond the id and name the list shows anyway."""
    return [m.to_json() for m in matches(result, query)
            if m.locator.value not in ("id", "name")]


def search_submissions(search: Search, views: ReadViews, text: str, status: str | None,
                       size: int, offset: int, tz: tzinfo | None = None) -> Found:
    """Submissions matching `text` (best first), `size` from `offset`, of `status` only if
    given, and how many match in each status. The status is checked on the results: in
    Steep's language filters of a query without terms widen it (each is a set of its own)
    instead of narrowing it."""
    query = parse_query(text, tz)
    error = problem(text, query)
    if error is not None:
        return Found(error=error)
    query = replace(query, types=(Type.WORKFLOW,))
    every = search.search(query, size=ALL)
    counts = Counter(str(r.status) for r in every)
    chosen = every if status is None else [r for r in every if r.status == status]
    results = chosen[offset:offset + size]
    items = []
    for result in results:
        summary = _summary(views, result.id)
        if summary is not None:
            summary["matches"] = _where(result, query)
            items.append(summary)
    return Found(items, len(chosen), counts=dict(counts))
