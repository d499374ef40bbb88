"""Search over submissions and process chains: a `Query` (steepy/search) compiled to
SQLAlchemy Core, on SQLite and PostgreSQL alike.

Ranked as Steep's PostgreSQL registry ranks (`PostgreSQLSubmissionRegistry.search`): each
term gives one set of rows (the term in any searched attribute, and every filter), or, in a
query without terms, each filter gives one; a row's rank is the number of sets it is in.
Results come by rank, then workflows before chains, then newest first. Like Steep, a filter
or locator that a type lacks (a chain has no name or source; a status word that names no
status) is left out for that type. Steep caps each set at its newest 1,000 rows for speed;
steepy does not (the cap loses rows that match several terms).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Hashable

from sqlalchemy import (ColumnElement, FromClause, and_, exists, func, literal, or_, select,
                        union_all)
from sqlalchemy.types import JSON

from steepy.model.common import as_utc
from steepy.model.submission import ProcessChainStatus, SubmissionStatus
from steepy.registry.connector import Connector
from steepy.registry.records import load
from steepy.registry.tables import process_chains, runs, submissions
from steepy.search.matcher import SearchResult
from steepy.search.query import TIME_TERMS, Locator, Operator, Query, StringTerm, Term, Type

# in Steep's order: a status word means the first status whose name contains it
STATUSES = {Type.WORKFLOW: [s.value for s in SubmissionStatus],
            Type.PROCESS_CHAIN: [s.value for s in ProcessChainStatus]}


@dataclass
class _Source:
    """The searchable columns of one type: a table, or chains with their latest run."""

    type: Type
    table: FromClause
    cols: dict[str, Any]


def _sources() -> dict[Type, _Source]:
    s = submissions.c
    newer = runs.alias("newer")
    latest = select(runs).where(~exists().where(  # each chain's latest run (an anti-join)
        newer.c.chain_id == runs.c.chain_id, newer.c.run_number > runs.c.run_number)
    ).subquery("latest")
    chains = process_chains.outerjoin(latest, latest.c.chain_id == process_chains.c.id)
    p = process_chains.c
    return {
        Type.WORKFLOW: _Source(Type.WORKFLOW, submissions, dict(
            seq=s.seq, id=s.id, name=s.name, status=s.status, rcs=s.required_capabilities,
            start=s.start_time, end=s.end_time, error=s.error_message, source=s.source)),
        Type.PROCESS_CHAIN: _Source(Type.PROCESS_CHAIN, chains, dict(
            seq=p.seq, id=p.id, name=None, status=p.status, rcs=p.required_capabilities,
            start=latest.c.start_time, end=latest.c.end_time, error=latest.c.error_message,
            source=None)),
    }


Condition = tuple[Hashable, ColumnElement[bool]]  # a key (equal keys: equal SQL) and the SQL
FIELDS = {Locator.ID: "id", Locator.NAME: "name", Locator.ERROR_MESSAGE: "error",
          Locator.SOURCE: "source", Locator.STATUS: "status", Locator.START_TIME: "start",
          Locator.END_TIME: "end", Locator.REQUIRED_CAPABILITIES: "rcs"}


class SqlSearch:
    def __init__(self, db: Connector):
        self.db = db
        self.sources = _sources()

    # -- conditions
    def _capability(self, column: Any, text: str) -> ColumnElement[bool]:
        """One of the JSON list's capabilities contains `text`: the stored JSON text
        contains it (fast, but may match between two values) and one value does."""
        if self.db.dialect.postgres:
            each = func.json_array_elements_text(column.cast(JSON)).table_valued("value")
        else:
            each = func.json_each(column).table_valued("value")
        return and_(column.icontains(json.dumps(text)[1:-1], autoescape=True),
                    exists(select(literal(1)).select_from(each).where(
                        each.c.value.icontains(text, autoescape=True))))

    def _condition(self, locator: Locator, term: Term, source: _Source) -> Condition | None:
        """Steep's makeWhere: `term` compared with `locator` of a row, or None where the type
        has no such attribute or the term does not apply to it."""
        name = FIELDS[locator]
        column = source.cols[name]
        if column is None:
            return None
        if isinstance(term, StringTerm):
            if locator in (Locator.START_TIME, Locator.END_TIME):
                return None
            if locator is Locator.STATUS:
                wanted = term.value.lower()
                found = next((s for s in STATUSES[source.type] if wanted in s.lower()), None)
                return None if found is None else ((name, "=", found), column == found)
            if locator is Locator.REQUIRED_CAPABILITIES:
                return (name, "like", term.value), self._capability(column, term.value)
            return (name, "like", term.value), column.icontains(term.value, autoescape=True)
        if locator not in (Locator.START_TIME, Locator.END_TIME) or not isinstance(term, TIME_TERMS):
            return None
        low, high = term.bounds()
        op = term.operator
        if op is Operator.LT:
            return (name, "<", low), column < low
        if op is Operator.LTE:
            return (name, "<", high), column < high
        if op is Operator.GTE:
            return (name, ">=", low), column >= low
        if op is Operator.GT:
            return (name, ">=", high), column >= high
        return (name, "in", low, high), and_(column >= low, column < high)

    def _conditions(self, pairs: list[tuple[Locator, Term]], source: _Source) -> list[Condition]:
        found: dict[Hashable, ColumnElement[bool]] = {}
        for locator, term in pairs:
            made = self._condition(locator, term, source)
            if made is not None:
                found.setdefault(made[0], made[1])
        return list(found.items())

    @staticmethod
    def _locators(query: Query) -> tuple[Locator, ...]:
        return (query.locators or tuple(Locator)) if query.terms else ()

    # -- the interface
    def search(self, query: Query, size: int = 10, offset: int = 0) -> list[SearchResult]:
        """The `size` best results from `offset` on (a negative size: all)."""
        if query.empty or size == 0:
            return []
        locators = self._locators(query)
        sets: dict[Hashable, Any] = {}
        for kind in query.types or tuple(Type):
            source = self.sources[kind]
            filters = self._conditions(list(query.filters), source)
            by_term = False
            for term in query.terms:
                terms = self._conditions([(loc, term) for loc in locators], source)
                if terms:
                    where = or_(*(c for _, c in terms))
                    if filters:
                        where = and_(where, *(c for _, c in filters))
                    key = (kind, tuple(k for k, _ in terms), tuple(k for k, _ in filters))
                    sets.setdefault(key, self._ids(source, where))
                    by_term = True
            if not by_term:
                for key, where in filters:
                    sets.setdefault((kind, key), self._ids(source, where))
        if not sets:
            return []
        found = union_all(*sets.values()).subquery("found")
        rank = func.count().label("rank")
        ranking = (select(found.c.id, found.c.type, rank)
                   .group_by(found.c.id, found.c.seq, found.c.type)
                   .order_by(rank.desc(), found.c.type, found.c.seq.desc())
                   .offset(max(0, offset)))
        if size > 0:
            ranking = ranking.limit(size)
        wanted = set(locators) | {loc for loc, _ in query.filters}
        with self.db.read() as conn:
            order = [(row.id, row.type) for row in conn.execute(ranking)]
            rows: dict[tuple[str, int], SearchResult] = {}
            for kind in Type:
                ids = [i for i, t in order if t == kind.priority]
                if ids:
                    for result in self._details(conn, self.sources[kind], ids, wanted):
                        rows[(result.id, kind.priority)] = result
        return [rows[key] for key in order if key in rows]

    def count(self, query: Query, kind: Type) -> int:
        """How many rows of `kind` match: what `search` finds of it without paging."""
        source = self.sources[kind]
        filters = [c for _, c in self._conditions(list(query.filters), source)]
        terms = [c for _, c in self._conditions(
            [(loc, term) for term in query.terms for loc in self._locators(query)], source)]
        if terms and filters:
            where = and_(or_(*terms), *filters)
        elif terms or filters:
            where = or_(*(terms or filters))
        else:
            return 0
        statement = select(func.count()).select_from(source.table).where(where)
        with self.db.read() as conn:
            return int(conn.execute(statement).scalar_one())

    # -- rows
    @staticmethod
    def _ids(source: _Source, where: ColumnElement[bool]) -> Any:
        cols = source.cols
        return select(cols["id"].label("id"), cols["seq"].label("seq"),
                      literal(source.type.priority).label("type")
                      ).select_from(source.table).where(where)

    @staticmethod
    def _details(conn: Any, source: _Source, ids: list[str],
                 wanted: set[Locator]) -> list[SearchResult]:
        cols = source.cols
        names = ["id", "status", "rcs", "start", "end", "name"]
        if Locator.ERROR_MESSAGE in wanted:
            names.append("error")
        if Locator.SOURCE in wanted:
            names.append("source")
        present = [n for n in names if cols[n] is not None]
        statement = select(*(cols[n].label(n) for n in present)).select_from(
            source.table).where(cols["id"].in_(ids))
        out = []
        for row in conn.execute(statement):
            values = dict(zip(present, row))
            out.append(SearchResult(
                id=values["id"], type=source.type, status=values["status"],
                name=values.get("name"), error_message=values.get("error"),
                required_capabilities=load(values["rcs"]) or [], source=values.get("source"),
                start_time=as_utc(values["start"]), end_time=as_utc(values["end"])))
        return out

