"""SQLite: the database file a process opened, watched (Connector.check_file asks). SQLite
would not notice the file deleted: its open connections go on using it, and what they write
is lost. A file found gone, empty, corrupted or holding another database is a problem until
it changes (restored from a backup: then the process's connections are opened afresh, and
one put back that holds its database is used again, `put_back`)."""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from sqlalchemy import Engine

from steepy.registry.failures import DatabaseUnavailable, driver_words
from steepy.registry.identity import ANOTHER, file_state, read_identity

FILE_CHECK_S = 0.5  # how often transactions look whether the file is still there
_CORRUPT = {11: "its file is corrupted", 26: "its file is not a SQLite database"}  # SQLite's codes


class DatabaseFile:
    def __init__(self, path: str, engine: Engine, reopen: Callable[[], None]):
        self.path = path
        self.engine = engine
        self._reopen = reopen  # the connector closes its connections: nothing of the file kept
        self._id = file_state(path)[1]
        self.problem: str | None = None  # what is wrong with it now
        self._checked = time.monotonic()
        self._lock = threading.Lock()
        self._broken: tuple[str, Any] | None = None  # a corrupted file: why, and its state
        # the id of the database opened, and a file found at its path since that holds
        # another database (registry/identity.py)
        self._database_id = read_identity(engine) if self._id else None
        self._foreign: Any = None
        self.put_back = False  # our file went away and was put back (identity.py)

    def check(self, now: bool = False) -> None:
        """Raise DatabaseUnavailable when the file is gone (deleted, moved away), empty, or
        was found corrupted and has not changed since. Looked at every FILE_CHECK_S at most
        (`now': at once), and at every call while something is wrong.

        The process's connections are closed when something is found wrong (so they keep
        nothing of the broken file: no pages in their caches, no WAL index) and again when the
        file is back (restored from a backup: maybe another file at the path), so that the
        next ones open it afresh."""
        if not now and self.problem is None and time.monotonic() - self._checked < FILE_CHECK_S:
            return
        with self._lock:
            problem, found, state = file_state(self.path)
            if problem is None and found == self._foreign:
                problem = ANOTHER  # (the file that replaced ours is still there)
            if problem is None and self._broken is not None:
                if state == self._broken[1]:
                    problem = self._broken[0]  # as it was found broken: nobody restored it
                else:
                    self._broken = None  # changed since: look at it afresh
            was, self.problem = self.problem, problem
            self._checked = time.monotonic()
            if problem is None and (found != self._id or was is not None):
                self._reopen()  # the file is back (or another one): nothing of the old kept
                problem = self.problem = self._same_database(found)
                if problem is None:
                    self._id = found  # ours: used from now on
                    self.put_back = self.put_back or was is not None
                else:
                    self._reopen()  # (nothing of it kept either)
            elif problem is not None and was is None:
                self._broke(problem)
        if problem is not None:
            raise DatabaseUnavailable(f"database {self.path}: {problem}")

    def _same_database(self, found: Any) -> str | None:
        """None when the file now at the path holds the database this process opened (or
        one that cannot say: made before migration 0018); else why it is not used."""
        known = self._database_id
        if known is None:
            return None
        try:
            now = read_identity(self.engine)
        except Exception as e:  # (being copied into place, locked: looked at again)
            return f"its file cannot be read yet ({str(e).strip().splitlines()[0]})"
        if now is not None and now != known:
            self._foreign = found
            return ANOTHER
        return None

    def noticed(self, error: BaseException) -> None:
        """SQLite found the file corrupted, or not a database: it stays so until the file
        changes (is restored), whatever reads of pages still whole may find."""
        detail = getattr(error, "orig", None) or error
        code = getattr(detail, "sqlite_errorcode", None)
        if code is None or code & 0xFF not in _CORRUPT:
            return
        with self._lock:
            if self.problem is None:
                self.problem = f"{_CORRUPT[code & 0xFF]} ({driver_words(error)})"
                self._broke(self.problem)

    def _broke(self, problem: str) -> None:
        """Hold nothing of the broken file (no cache, no WAL index); what our connections'
        closing writes into it (SQLite's checkpoint at the last close) does not make it whole:
        it counts as broken until its state differs from now."""
        self._reopen()
        if not problem.startswith("its file is gone"):
            self._broken = (problem, file_state(self.path)[2])

    def problem_now(self) -> str | None:
        """What is wrong with the file now (see `check`), or None."""
        try:
            self.check(now=True)
        except DatabaseUnavailable:
            return self.problem
        return None
