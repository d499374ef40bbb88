"""`/search` for browsers: Steep's query language over workflows and process chains (what
GET /search answers clients), as a page: a search box, tabs per type with their counts, the
results best first with where the query matched (the matched words marked), in pages."""

from __future__ import annotations

from dataclasses import dataclass, replace

from starlette.requests import Request
from starlette.responses import Response

from steepy.search import Match, SearchResult, Type, matches, parse_query
from steepy.ui.pages.workflows_search import zone
from steepy.ui.paging import Listing
from steepy.ui.render import page as render
from steepy.ui.routing import page

TABS = [(None, "All"), (Type.WORKFLOW, "Workflows"), (Type.PROCESS_CHAIN, "Process chains")]
KINDS = {Type.WORKFLOW: ("Workflow", "/workflows/"),
         Type.PROCESS_CHAIN: ("Process chain", "/processchains/")}
SHOWN = {"id", "name"}  # a result shows these anyway: no line of its own for their matches


@dataclass
class Row:
    result: SearchResult
    kind: str  # Workflow / Process chain
    href: str  # below the base path
    where: list[tuple[str, list[tuple[str, bool]]]]  # locator, the fragment in marked pieces


def pieces(found: Match) -> list[tuple[str, bool]]:
    """The fragment cut where the query's words are: (text, whether it is a match)."""
    text, cuts = found.fragment, []
    for term in found.term_matches:
        cuts += [(at, at + len(term.term)) for at in term.indices]
    out, at = [], 0
    for start, end in sorted(cuts):
        if start < at:
            continue  # overlapping matches: the first wins
        out += [(text[at:start], False), (text[start:end], True)]
        at = end
    out.append((text[at:], False))
    return [(piece, marked) for piece, marked in out if piece]


def _row(result: SearchResult, where: list[Match]) -> Row:
    kind, prefix = KINDS[result.type]
    return Row(result, kind, prefix + result.id,
               [(m.locator.value, pieces(m)) for m in where if m.locator.value not in SHOWN])


def _type(name: str | None) -> Type | None:
    return next((t for t in Type if t.value == name), None)


def search_page(request: Request) -> Response:
    params = request.query_params
    q = params.get("q", "").strip()
    kind = _type(params.get("type"))
    listing = Listing.read(request, "/search", q=q, type=kind and kind.value,
                           timeZone=params.get("timeZone"))
    rows: list[Row] = []
    counts = {t: 0 for t in Type}
    if q:
        search = request.app.state.ctx.registry.search
        query = parse_query(q, zone(params.get("timeZone")))
        counts = {t: search.count(query, t) for t in Type}  # every type: the tabs
        shown = query if kind is None else replace(query, types=(kind,))
        rows = [_row(r, matches(r, shown))
                for r in search.search(shown, size=listing.size, offset=listing.offset)]
    total = sum(counts.values()) if kind is None else counts[kind]
    tabs = [(label, listing.link(type=t and t.value, offset=None), t == kind,
             sum(counts.values()) if t is None else counts[t]) for t, label in TABS]
    return render(request, "search.html", q=q, rows=rows, tabs=tabs,
                  listing=listing.showing(len(rows), total))


ROUTES = [page("/search", search_page)]
