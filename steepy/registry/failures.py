"""When the database cannot be used: which one, why, in one line; and waiting it out.

A full or read-only disk, a lost server or a file that cannot be opened are not bugs of
steepy: commands say so in one line and exit with EXIT_DATABASE; the engine's components
keep what they hold in memory, wait and try again (`persist`), so the stored state stays
consistent and nothing is lost once the database can be written again.
"""

from __future__ import annotations

import os

from steepy.errors import SteepyError

EXIT_DATABASE = 4  # the command could not use the database
MAX_BACKOFF_S = 30.0
_opened: list[str] = []  # database URLs this process opened, newest last


class DatabaseUnavailable(SteepyError):
    """The database cannot be opened or written; the message says which and why."""


def opened(url: str) -> None:
    _opened.append(url)


def is_database_failure(error: BaseException) -> bool:
    if isinstance(error, DatabaseUnavailable):
        return True
    try:
        from sqlalchemy.exc import InterfaceError, OperationalError
    except ImportError:  # pragma: no cover - sqlalchemy is a dependency
        return False
    # the database or its disk, not the statement (an IntegrityError is a bug: never retried)
    return isinstance(error, (OperationalError, InterfaceError))


def _where(url: str) -> tuple[str, str | None]:
    """How to name the database, and the folder its file lies in (SQLite)."""
    from sqlalchemy.engine import make_url

    try:
        parsed = make_url(url)
    except Exception:  # noqa: BLE001 - a bad URL is reported elsewhere
        return url, None
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        path = os.path.abspath(parsed.database)
        return path, os.path.dirname(path)
    return parsed.render_as_string(hide_password=True), None


def _disk_state(folder: str) -> str | None:
    while folder and not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    try:
        stat = os.statvfs(folder or "/")
    except OSError:
        return None
    if stat.f_flag & os.ST_RDONLY:
        return "its file system is read-only"
    if stat.f_bavail * stat.f_frsize < 64 * 1024:
        return "the disk is full"
    return None


def describe(error: BaseException, url: str | None = None) -> str:
    """`database PATH: CAUSE (driver's words)` in one line."""
    url = url or (_opened[-1] if _opened else "")
    name, folder = _where(url) if url else ("(unknown)", None)
    if isinstance(error, DatabaseUnavailable):
        return str(error)
    detail = getattr(error, "orig", None) or error
    words = (str(detail).strip().splitlines() or [type(detail).__name__])[0]
    if isinstance(detail, OSError) and detail.strerror:
        words = detail.strerror
    cause = _disk_state(folder) if folder else None
    if cause is None:
        lowered = words.lower()
        if "no space left" in lowered or "disk is full" in lowered or "disk full" in lowered:
            cause = "the disk is full"
        elif "read-only" in lowered or "readonly" in lowered:
            cause = "it is read-only"
    return f"database {name}: {cause} ({words})" if cause else f"database {name}: {words}"
