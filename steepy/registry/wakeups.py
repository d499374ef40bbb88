"""How a process hears that another one committed, without looking every few milliseconds.

The engine and the live feed learn of other processes' commits from the database's change
marker (`Connector.change_marker`). Looking at it 50 times a second costs an idle worker a few
percent of a core. A `WakeSource` is a file descriptor that becomes readable when the marker
may have moved, so the change watcher (steepy/engine/changes.py) can sleep in the event loop
until then:

- SQLite (Linux): an inotify watch on the database's directory. Every commit of any process
  writes the WAL file (`steepy.db-wal`) or, without WAL, the database file: the kernel reports
  it. Nothing is read from the events but that they came.
- PostgreSQL: the socket of the connection that LISTENs; NOTIFY arrives on it.

Where neither works (no inotify, its limits reached, a database without a marker), there is no
source and the watcher looks at the marker on its timer as before. inotify does not see writes
of other machines (a database file on NFS): a watcher with a source still looks on a slow timer
(`ChangeWatcher.safety_s`).
"""

from __future__ import annotations

import ctypes
import logging
import os
from typing import Any, Protocol

log = logging.getLogger(__name__)

__all__ = ["WakeSource", "DirectoryWatch", "SocketSource", "watch_directory"]

# <sys/inotify.h>
_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x002, 0x004, 0x008
_IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x080, 0x100, 0x200
_MASK = _IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE
_IN_NONBLOCK, _IN_CLOEXEC = os.O_NONBLOCK, 0o2000000


class WakeSource(Protocol):
    """A file descriptor that becomes readable when another process may have committed."""

    def fileno(self) -> int: ...

    def drain(self) -> None:
        """Read what made it readable, so that it waits again."""

    def close(self) -> None: ...


_LIBC: list[Any] = []  # the C library once looked up (a list: None is an answer too)


def _libc() -> Any | None:
    """The C library with inotify (Linux), or None. The running program's own symbols are
    looked in (`CDLL(None)`): `ctypes.util.find_library` would start `ldconfig`."""
    if not _LIBC:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.inotify_init1, libc.inotify_add_watch  # noqa: B018 - Linux only
            _LIBC.append(libc)
        except (OSError, AttributeError):
            _LIBC.append(None)
    return _LIBC[0]


class DirectoryWatch:
    """inotify on one directory: readable after a file in it was written, made or removed."""

    def __init__(self, fd: int):
        self._fd = fd

    def fileno(self) -> int:
        return self._fd

    def drain(self) -> None:
        while self._fd >= 0:
            try:
                if not os.read(self._fd, 65536):
                    return
            except (BlockingIOError, InterruptedError):
                return

    def close(self) -> None:
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)

    def __del__(self) -> None:
        self.close()


def watch_directory(directory: str) -> DirectoryWatch | None:
    """A watch on `directory`, or None where inotify is missing or refuses (its limits)."""
    libc = _libc()
    if libc is None:
        return None
    fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
    if fd < 0:
        log.debug("no inotify instance (%s): looking at the database on a timer",
                  os.strerror(ctypes.get_errno()))
        return None
    if libc.inotify_add_watch(fd, os.fsencode(directory), _MASK) < 0:
        log.debug("cannot watch %s (%s): looking at the database on a timer", directory,
                  os.strerror(ctypes.get_errno()))
        os.close(fd)
        return None
    return DirectoryWatch(fd)


class SocketSource:
    """The LISTENing connection's socket (PostgreSQL); its notifications are read by the
    marker itself (`Dialect.commits_seen`), so draining is nothing."""

    def __init__(self, fd: int):
        self._fd = fd

    def fileno(self) -> int:
        return self._fd

    def drain(self) -> None:
        return None

    def close(self) -> None:
        return None  # the connector owns the connection
