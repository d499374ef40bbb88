"""The registry of a command that reads an SQLite file once (`list', `show', `status', `logs',
`events'), over Python's own sqlite3: issue 31, such a command starts in a tenth of a
second, where importing SQLAlchemy alone takes a fifth. (`wait' and `logs -f' read on: they
open the registry as the engines do, which notice the file deleted or put back.)
`quick_registry' opens one when it can, or says None: the caller then opens the registry as
ever (a missing, new or older database, a URL read here as no plain file, a file SQLite
refuses), so every problem is reported as before."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path

from steepy.model.common import utcnow
from steepy.registry.plainsqlite import BUSY_TIMEOUT_MS, PlainReader
from steepy.registry.reads import LeaseReads, LogReads, TextReads
from steepy.registry.revisions import head_revisions

_URL = "sqlite:///"


class _SystemTime:
    """The clock `unowned' reads (steepy.model.clock's system clock is asyncio's too)."""

    @staticmethod
    def now() -> datetime:
        return utcnow()


class QuickRegistry:
    """The parts of steepy.registry.Registry a command that only reads uses, over Python's
    sqlite3 (steepy/registry/reads.py has their queries)."""

    def __init__(self, connection: sqlite3.Connection, url: str):
        reader = PlainReader(connection, url)
        self.connection = connection
        self.views = TextReads(reader)
        self.logs = LogReads(reader)
        self.leases = LeaseReads(reader, _SystemTime())

    def release(self) -> None:
        self.connection.close()  # (the last connection: SQLite removes its -wal and -shm)

    close = release


def quick_registry(url: str) -> QuickRegistry | None:
    """The registry of the SQLite file at `url' for reading (`sqlite:///PATH', the file
    there, its schema this steepy's newest), else None."""
    if not url.startswith(_URL) or any(c in url for c in "?%#"):
        return None
    path = Path(url[len(_URL):])
    if not path.name or path.name == ":memory:" or not path.is_file():
        return None
    try:
        connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000,
                                     isolation_level=None, check_same_thread=False)
    except sqlite3.Error:
        return None
    try:
        journal = connection.execute("PRAGMA journal_mode").fetchone()[0]
        current = {r[0] for r in connection.execute("SELECT version_num FROM alembic_version")}
        if journal.lower() == "wal" and current == head_revisions():
            return QuickRegistry(connection, url)
    except sqlite3.Error:  # not steepy's, or SQLite refuses it: the full way says what
        pass
    connection.close()
    return None
