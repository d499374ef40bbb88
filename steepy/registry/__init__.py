"""Durable state of steepy: SQLite by default, PostgreSQL for many machines.

`Registry` is the registry of one database: a `Connector` and one SQL implementation per
audience (interfaces.py says who asks what). Components receive only the interface they need.
"""

from __future__ import annotations

from typing import Sequence

from sqlalchemy import Engine

from steepy.model.clock import SYSTEM, Clock
from steepy.events.webhooks import Subscriber
from steepy.registry.connector import Connector
from steepy.registry.database import DEFAULT_URL, open_engine
from steepy.registry.cache import SqlCache
from steepy.registry.housekeeping import SqlHousekeeping
from steepy.registry.interfaces import (Cache, ChainQueue, ClaimFor, Housekeeping, Leases, LogStore, Outbox,
                                        ReadViews, Requests, RunEnd, Schedules, Search,
                                        SubmissionStore)
from steepy.registry.leases import SqlLeases
from steepy.registry.logs import SqlLogStore
from steepy.registry.outbox import SqlOutbox
from steepy.registry.queue import SqlChainQueue
from steepy.registry.records import ChainRecord, RunRecord
from steepy.registry.requests import SqlRequests
from steepy.registry.schedules import SqlSchedules
from steepy.registry.search import SqlSearch
from steepy.registry.submissions import SqlSubmissionStore
from steepy.registry.views import SqlReadViews


class Registry:
    def __init__(self, engine: Engine, webhooks: Sequence[Subscriber] = (), clock: Clock = SYSTEM):
        self.db = Connector(engine)
        self.queue: ChainQueue = SqlChainQueue(self.db)
        self.submissions: SubmissionStore = SqlSubmissionStore(self.db)
        self.leases: Leases = SqlLeases(self.db, clock)
        self.requests: Requests = SqlRequests(self.db)
        self.views: ReadViews = SqlReadViews(self.db)
        self.logs: LogStore = SqlLogStore(self.db)
        self.search: Search = SqlSearch(self.db)
        self.schedules: Schedules = SqlSchedules(self.db)
        self.housekeeping: Housekeeping = SqlHousekeeping(self.db)
        self.cache: Cache = SqlCache(self.db)  # reusable work (extensions 15)
        # with webhooks, the events they want are written with their deliveries
        self.outbox: Outbox = SqlOutbox(self.db, webhooks)

    @property
    def engine(self) -> Engine:
        return self.db.engine

    def close(self) -> None:
        """Close this process's connections to the database."""
        self.db.close()


def open_registry(url: str | None = None, webhooks: Sequence[Subscriber] = (),
                  clock: Clock = SYSTEM) -> Registry:
    """The registry at `url` (default: SQLite .steepy/steepy.db), created or upgraded; with
    `webhooks`, the events they want get their deliveries in the outbox; leases run out on
    `clock`."""
    return Registry(open_engine(url), webhooks, clock)


__all__ = ["DEFAULT_URL", "ChainQueue", "ChainRecord", "ClaimFor", "Housekeeping", "Leases",
           "LogStore", "Outbox", "ReadViews", "Registry", "Requests", "RunEnd", "RunRecord", "Schedules",
           "SubmissionStore", "open_registry"]
