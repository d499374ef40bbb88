"""Durable state of steepy: SQLite by default, PostgreSQL for many machines."""

from steepy.registry.database import DEFAULT_URL, open_engine
from steepy.registry.store import ChainRecord, Registry, RunRecord


def open_registry(url: str | None = None) -> Registry:
    """The registry at `url` (default: SQLite .steepy/steepy.db), created or upgraded."""
    return Registry(open_engine(url))


__all__ = ["DEFAULT_URL", "ChainRecord", "Registry", "RunRecord", "open_registry"]
