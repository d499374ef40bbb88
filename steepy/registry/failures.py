"""When the database cannot be used: which one, why, in one line; and waiting it out.

A full or read-only disk, a lost server or a file that cannot be opened are not bugs of
steepy: commands say so in one line and exit with EXIT_DATABASE; the engine's components
keep what they hold in memory, wait and try again (registry/outage.py), so the stored state
stays consistent and nothing is lost once the database can be written again.
"""

from __future__ import annotations

import re

import os
import sys

from steepy.errors import SteepyError

EXIT_DATABASE = 4  # the command could not use the database
_opened: list[str] = []  # database URLs this process opened, newest last


class DatabaseUnavailable(SteepyError):
    """The database cannot be opened or written; the message says which and why."""


def opened(url: str) -> None:
    _opened.append(url)


def opened_urls() -> list[str]:
    """The database URLs this process opened (their secrets stay out of tools' environments)."""
    return list(_opened)


# SQLite's primary result codes that mean the database (its file, its disk, its locks)
# failed, not the statement: PERM, BUSY, LOCKED, NOMEM, READONLY, IOERR, CORRUPT, FULL,
# CANTOPEN, PROTOCOL, NOTADB
_SQLITE_FAILURES = {3, 5, 6, 7, 8, 10, 11, 13, 14, 15, 26}
# the same in the words of drivers that do not say the code
_SQLITE_WORDS = ("database or disk is full", "disk i/o error", "database is locked",
                 "database table is locked", "unable to open database file",
                 "attempt to write a readonly database", "database disk image is malformed",
                 "file is not a database", "locking protocol", "access permission denied",
                 "out of memory")
# PostgreSQL: a read-only (standby) server, data or index corrupted, a session the server
# ended after it sat idle in a transaction (steepy's sessions set that timeout: a process
# that stalled for a minute, a paused machine)
_POSTGRES_FAILURES = {"25006", "25P03", "XX001", "XX002"}


def _driver_failure(error: BaseException) -> bool | None:
    """Whether an error of a driver (sqlite3, psycopg) means the database failed; None for
    errors of no driver we know."""
    import sqlite3

    if isinstance(error, sqlite3.Error):
        if isinstance(error, (sqlite3.IntegrityError, sqlite3.ProgrammingError,
                              sqlite3.InterfaceError, sqlite3.DataError,
                              sqlite3.NotSupportedError)):
            return False  # our statement or our use of the driver: a bug
        if not isinstance(error, sqlite3.DatabaseError):
            return False
        words = str(error).lower()
        if words.startswith("no such table"):
            return True  # not the database steepy created (a file replaced by an empty one)
        code = getattr(error, "sqlite_errorcode", None)
        if code is not None:
            return (code & 0xFF) in _SQLITE_FAILURES
        return any(w in words for w in _SQLITE_WORDS)
    psycopg = sys.modules.get("psycopg")  # not loaded: no error can be one of its
    if psycopg is not None and isinstance(error, psycopg.Error):
        if isinstance(error, (psycopg.OperationalError, psycopg.InterfaceError)):
            return True  # the server or the connection to it (lost, shut down, full, ...)
        return getattr(error, "sqlstate", None) in _POSTGRES_FAILURES
    return None


def is_database_failure(error: BaseException) -> bool:
    """Whether `error` means the database cannot be used now (its disk is full or read-only,
    its file is gone or corrupted, it is locked, its server is unreachable): waiting and
    trying again may help. False for a bug: a statement of ours the database refuses (a
    syntax error, an integrity violation) must not be retried forever.

    Errors are classified alike whether SQLAlchemy wrapped them or a driver raised them
    itself (the hot path's and the checkpoints' DBAPI cursors)."""
    if isinstance(error, DatabaseUnavailable):
        return True
    try:
        from sqlalchemy import exc
    except ImportError:  # pragma: no cover - sqlalchemy is a dependency
        return False
    if isinstance(error, exc.DBAPIError):
        if error.connection_invalidated:
            return True
        orig = error.orig
        if isinstance(orig, BaseException):
            known = _driver_failure(orig)
            if known is not None:
                return known
        return isinstance(error, (exc.OperationalError, exc.InterfaceError))
    if isinstance(error, (exc.DisconnectionError, exc.TimeoutError)):
        return True  # (TimeoutError: the pool had no connection to give in time: every one
    return bool(_driver_failure(error))  # is held, waiting for a server that does not answer)


def is_integrity_error(error: BaseException) -> bool:
    """Whether the database refused a write that breaks its rules (a foreign key, a unique
    value), whether SQLAlchemy wrapped the driver's error or not."""
    import sqlite3

    from sqlalchemy import exc

    detail = getattr(error, "orig", None) or error
    psycopg = sys.modules.get("psycopg")
    kinds: tuple = (exc.IntegrityError, sqlite3.IntegrityError) + (
        (psycopg.IntegrityError,) if psycopg is not None else ())
    return isinstance(error, kinds) or isinstance(detail, kinds)


def database_errors() -> list[type[BaseException]]:
    """The classes of the errors that may mean a failure of the database (SQLAlchemy's and
    those of the drivers loaded), for handlers that catch them by class."""
    import sqlite3

    from sqlalchemy.exc import DBAPIError, DisconnectionError

    kinds: list[type[BaseException]] = [DatabaseUnavailable, DBAPIError, DisconnectionError,
                                         sqlite3.Error]
    psycopg = sys.modules.get("psycopg")  # loaded by a registry on PostgreSQL
    return kinds + [psycopg.Error] if psycopg is not None else kinds


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
    return masked(url), None


def _disk_state(folder: str) -> str | None:
    while folder and not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    try:
        stat = os.statvfs(folder or "/")
    except OSError:
        return None
    if stat.f_blocks == 0:  # no disk: a pseudo file system (/proc, /sys) keeps no files
        return None
    if stat.f_flag & os.ST_RDONLY:
        return "its file system is read-only"
    if stat.f_bavail * stat.f_frsize < 64 * 1024:
        return "the disk is full"
    return None


def disk_problem(url: str) -> str | None:
    """SQLite: why the disk of its file takes no writes (full, read-only), or None. Reads
    still work then, so only this tells that nothing can be stored."""
    _name, folder = _where(url)
    return _disk_state(folder) if folder else None


_CAUSES = {11: "its file is corrupted", 26: "its file is not a SQLite database",
           14: "its file cannot be opened", 8: "it is read-only", 13: "the disk is full",
           5: "it is locked", 6: "it is locked", 10: "its disk failed (I/O error)"}


# the password of `scheme://user:PASSWORD@host/...' (up to the last `@' before a query: an
# unquoted `@' or `/' may be part of it), and a query's (or fragment's) `key=value' pairs
_USERINFO = re.compile(r"^[A-Za-z][A-Za-z0-9+.:-]*://[^:/?#@\s]*:(?P<secret>[^?#\s]*)@")
_PAIR = re.compile(r"[?&;#](?P<key>[^=&;#?\s]*)=(?P<secret>[^&;#\s]*)")
# query keys whose values are secrets: `token', `api_key', `password', `sig', `code', ...
_SECRET_KEY = re.compile(r"token|key|secret|pass|pwd|sig|code|auth|credential|session",
                         re.IGNORECASE)
# an http(s) URL's path segments this long or longer are its secret: a chat tool's incoming
# webhook is its URL (Slack's `/services/T0/B0/<24 characters>', Discord's, Teams'), while
# a word of a path (`services', `hooks') is shorter
_PATH_SECRET = 16
_WEB_PATH = re.compile(r"^https?://[^/?#\s]*(?P<path>/[^?#\s]*)", re.IGNORECASE)


def _secret_spans(url: str, paths: bool = False) -> list[tuple[int, int]]:
    """Where the secrets of a URL are: its password, the values of query keys that look
    secret (any URL: a database's, a webhook's, Steep's `jdbc:' form) and, with `paths', of
    an http(s) URL the long segments of its path (to show: a tool's environment keeps them
    apart, steepy.agent.environment.Withheld.within, as a folder's name may be one)."""
    from urllib.parse import unquote

    spans = []
    found = _USERINFO.search(url)
    if found and found.group("secret"):
        spans.append(found.span("secret"))
    web = _WEB_PATH.match(url) if paths else None
    if web:
        start = web.start("path")
        for segment in re.finditer(r"[^/]+", web.group("path")):
            if len(segment.group()) >= _PATH_SECRET:
                spans.append((start + segment.start(), start + segment.end()))
    for pair in _PAIR.finditer(url):
        if pair.group("secret") and _SECRET_KEY.search(unquote(pair.group("key"))):
            spans.append(pair.span("secret"))
    return sorted(spans)


def url_secrets(url: str) -> set[str]:
    """The secrets in a URL, as written and decoded (`p%40ss' and `p@ss'); what masked()
    hides."""
    from urllib.parse import unquote

    parts = {url[start:end] for start, end in _secret_spans(url)}
    return parts | {unquote(part) for part in parts}


def holds_password(url: str) -> bool:
    """Whether a database URL holds a password: in its user part, or libpq's `password' or
    `sslpassword' key (libpq's other keys name files or modes). False for what is no URL."""
    from sqlalchemy.engine import make_url

    try:
        parsed = make_url(url)
    except Exception:
        return False
    return parsed.password is not None or any(
        key.lower() in ("password", "sslpassword") for key in parsed.query)


def masked(url: str) -> str:
    """A URL (a database's or a webhook's) with its password, the values of its secret
    query keys and (http, https) its path's long segments replaced by `***', fit for a log,
    an error, a page or an answer: `http://hook:***@host/x?token=***&channel=ops',
    `https://hooks.slack.com/services/T0/B0/***'. Every URL steepy shows goes through
    this; what it connects to is the real one."""
    for start, end in reversed(_secret_spans(url, paths=True)):
        url = f"{url[:start]}***{url[end:]}"
    return url


def driver_words(error: BaseException) -> str:
    """The first line of what the driver said of `error' (SQLAlchemy's wrapper taken off),
    or the error's class when it said nothing."""
    detail = getattr(error, "orig", None) or error
    return (str(detail).strip().splitlines() or [type(detail).__name__])[0]


def describe(error: BaseException, url: str | None = None) -> str:
    """`database PATH: CAUSE (driver's words)` in one line, without a password."""
    url = url or (_opened[-1] if _opened else "")
    name, folder = _where(url) if url else ("(unknown)", None)
    if isinstance(error, DatabaseUnavailable):
        return _hide_password(str(error), url)
    detail = getattr(error, "orig", None) or error
    words = driver_words(error)
    if isinstance(detail, OSError) and detail.strerror:
        words = detail.strerror
    cause = _disk_state(folder) if folder else None
    if cause is None:
        lowered = words.lower()
        code = getattr(detail, "sqlite_errorcode", None)
        if "no space left" in lowered or "disk is full" in lowered or "disk full" in lowered:
            cause = "the disk is full"
        elif "read-only" in lowered or "readonly" in lowered:
            cause = "it is read-only"
        elif code is not None and (code & 0xFF) in _CAUSES:
            cause = _CAUSES[code & 0xFF]
    text = f"database {name}: {cause} ({words})" if cause else f"database {name}: {words}"
    return _hide_password(text, url)


def _hide_password(text: str, url: str) -> str:
    """`text` with the secrets of `url` (its password, ...) replaced by ***."""
    for secret in sorted(url_secrets(url) if url else (), key=len, reverse=True):
        if len(secret) > 2:
            text = text.replace(secret, "***")
    return text
