"""Durable state of steepy: SQLite by default, PostgreSQL for many machines.

`Registry` is the registry of one database: a `Connector` and one SQL implementation per
audience (interfaces.py says who asks what). Components receive only the interface they need.

Each implementation's module is imported when its part is first used, and the names below
when first asked for (issue 31: `steepy list` uses the views, and imports neither the queue
nor the outbox).
"""

from __future__ import annotations

import importlib
import threading
from typing import TYPE_CHECKING, Any, Sequence

from steepy import lazy_attributes
from steepy.registry.plainsqlite import DEFAULT_URL

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from steepy.model.clock import Clock

    from steepy.events.webhooks import Subscriber
    from steepy.registry.interfaces import (Cache, ChainQueue, Housekeeping, Leases, LogStore,
                                            Outbox, ReadViews, Requests, Schedules, Search,
                                            SubmissionStore)
    from steepy.registry.writes import ClaimFor, RunEnd
    from steepy.registry.records import ChainRecord, RunRecord

# a part of the registry -> the module and class that implement it
_PARTS = {"queue": "queue:SqlChainQueue", "submissions": "submissions:SqlSubmissionStore",
          "leases": "leases:SqlLeases", "requests": "requests:SqlRequests",
          "views": "views:SqlReadViews", "logs": "logs:SqlLogStore", "search": "search:SqlSearch",
          "schedules": "schedules:SqlSchedules", "housekeeping": "housekeeping:SqlHousekeeping",
          "cache": "cache:SqlCache",  # reusable work (extensions 15)
          "outbox": "outbox:SqlOutbox"}


class Registry:
    queue: ChainQueue
    submissions: SubmissionStore
    leases: Leases
    requests: Requests
    views: ReadViews
    logs: LogStore
    search: Search
    schedules: Schedules
    housekeeping: Housekeeping
    cache: Cache
    # with webhooks, the events they want are written with their deliveries
    outbox: Outbox

    def __init__(self, engine: Engine, webhooks: Sequence[Subscriber] = (),
                 clock: Clock | None = None):
        from steepy.model.clock import SYSTEM
        from steepy.registry.connector import Connector

        self.db = Connector(engine)
        # beside the connector
        self._extra = {"leases": (clock or SYSTEM,), "outbox": (webhooks,)}
        self._making = threading.Lock()
        if webhooks:  # the outbox's writer joins the connector: events get their deliveries
            self._part("outbox")

    def __getattr__(self, name: str) -> Any:
        if name not in _PARTS:
            raise AttributeError(name)
        return self._part(name)

    def _part(self, name: str) -> Any:
        """A part (`views`), made when first used (by one thread: parts may keep state)."""
        with self._making:
            if name not in self.__dict__:
                module, kind = _PARTS[name].split(":")
                implementation = getattr(importlib.import_module(f"steepy.registry.{module}"), kind)
                self.__dict__[name] = implementation(self.db, *self._extra.get(name, ()))
        return self.__dict__[name]

    @property
    def engine(self) -> Engine:
        return self.db.engine

    def close(self) -> None:
        """Close this process's connections to the database."""
        self.db.close()

    def release(self) -> None:
        """Close the connections as the interpreter's teardown would (SQLite removes its -wal
        and -shm files as the last one closes), without close()'s checkpoint: for a command
        that only read (a read-only database refuses a checkpoint)."""
        self.engine.dispose()


def open_registry(url: str | None = None, webhooks: Sequence[Subscriber] = (),
                  clock: Clock | None = None) -> Registry:
    """The registry at `url` (default: SQLite .steepy/steepy.db), created or upgraded; with
    `webhooks`, the events they want get their deliveries in the outbox; leases run out on
    `clock` (default: the system's)."""
    from steepy.registry.database import open_engine

    return Registry(open_engine(url), webhooks, clock)


# the interfaces and records: imported when first asked for
_HOMES = {**{name: "steepy.registry.interfaces" for name in (
    "Cache", "ChainQueue", "ClaimFor", "Housekeeping", "Leases", "LogStore", "Outbox",
    "ReadViews", "Requests", "RunEnd", "Schedules", "Search", "SubmissionStore")},
    "ChainRecord": "steepy.registry.records", "RunRecord": "steepy.registry.records",
    "TakenOver": "steepy.registry.ownership"}

__getattr__, __dir__ = lazy_attributes(globals(), _HOMES)

__all__ = ["DEFAULT_URL", "ChainQueue", "ChainRecord", "ClaimFor", "Housekeeping", "Leases",
           "LogStore", "Outbox", "ReadViews", "Registry", "Requests", "RunEnd", "RunRecord", "Schedules",
           "SubmissionStore", "TakenOver", "open_registry"]
