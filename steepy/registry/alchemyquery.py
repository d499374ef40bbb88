"""steepy.registry.reads.Query over a SQLAlchemy connection (SQLite or PostgreSQL): SQL text,
its times and flags typed as the tables' columns are, so rows come back as Core's do."""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache
from typing import Any, Sequence

from sqlalchemy import Boolean, Connection, DateTime, TextClause, text

from steepy.registry.plainsqlite import sqlite_time


@lru_cache(maxsize=512)
def _statement(sql: str, times: tuple[str, ...], flags: tuple[str, ...]) -> TextClause:
    types = {**{n: DateTime(timezone=True) for n in times}, **{n: Boolean() for n in flags}}
    return text(sql).columns(**types) if types else text(sql)  # type: ignore[return-value]


class AlchemyQuery:
    def __init__(self, connection: Connection):
        self.connection = connection
        self.dialect = connection.dialect.name

    def rows(self, sql: str, params: dict[str, Any], times: Sequence[str] = (),
             flags: Sequence[str] = ()) -> list[Any]:
        return list(self.connection.execute(_statement(sql, tuple(times), tuple(flags)),
                                            params).all())

    def time(self, value: datetime) -> Any:
        # (a parameter of SQL text is untyped: sqlite3 would write an aware time with its
        # offset, which compares as later than the same time stored)
        return sqlite_time(value) if self.dialect == "sqlite" else value
