"""Per-chain, per-run log files (reference section 12) that can be tailed while a chain runs."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from pathlib import Path
from typing import Callable, Protocol

from steepy.model.clock import wait_event
from steepy.registry.outage import database_failure_said

log = logging.getLogger(__name__)


class LogSink(Protocol):
    """Where a run's log goes besides its file, so it can be read on other machines."""

    def append(self, chain_id: str, run_number: int, offset: int, data: bytes) -> None: ...


class ChainLog:
    """Appends output lines and flushes every batch, so readers see lines as they arrive;
    with a sink, `ship` hands what was written since the last call to it.

    The file is created with the first line of output, as Steep's log appender does: a run
    that prints nothing has no log (404), and the many tiny tools of a large workflow cost no
    file each. A log that cannot be opened is reported once and then ignored: the chain still
    runs."""

    MAX_PENDING = 64 * 1024 * 1024  # while the sink fails, older output is dropped beyond this

    def __init__(self, path: Path | Callable[[], Path] | None, sink: LogSink | None = None,
                 chain_id: str = "", run_number: int = 1, timestamps: bool = False) -> None:
        self._path = path  # or how to make it, at the first line (most tools print nothing)
        self.sink, self.chain_id, self.run_number = sink, chain_id, run_number
        self._pending = bytearray()
        self._shipped = 0  # bytes the sink has (or dropped)
        self._file = None
        self._opened = path is None  # tried to open the file (it is opened at the first line)
        self.timestamps = timestamps  # each line starts with Steep's `yyyy-MM-dd HH:mm:ss - '

    @property
    def path(self) -> Path | None:
        if callable(self._path):
            self._path = self._path()
        return self._path

    def _open(self) -> None:
        self._opened = True
        path = self.path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(path, "a", encoding="utf-8", errors="replace")
        except OSError as e:
            log.warning("cannot write process chain log %s: %s", path, e)

    def write_lines(self, lines: list[str]) -> None:
        """Append `lines'; with timestamps, each starts with the local time of writing (in
        the file and for the sink alike, so that byte offsets agree everywhere)."""
        if self.timestamps:
            prefix = datetime.now().strftime("%Y-%m-%d %H:%M:%S - ")
            lines = [prefix + line for line in lines]
        text = "\n".join(lines) + "\n"
        if self.sink is not None:
            self._pending += text.encode("utf-8", errors="replace")
            if len(self._pending) > self.MAX_PENDING:
                dropped = len(self._pending) - self.MAX_PENDING
                del self._pending[:dropped]
                self._shipped += dropped
        if not self._opened:
            self._open()
        if self._file is None:
            return
        try:
            self._file.write(text)
            self._file.flush()
        except OSError as e:
            log.warning("cannot write process chain log %s: %s", self.path, e)
            self.close()

    async def ship(self) -> None:
        """Hand the output written since the last call to the sink (in a worker thread); if
        the database fails, it is kept for the next call (the chain runs on; the file has
        everything). Anything else the sink raises is a bug and raised."""
        if self.sink is None or not self._pending:
            return
        data = bytes(self._pending)
        del self._pending[:]
        with database_failure_said(log, "log of process chain %s not stored (%s); kept for the "
                                   "next try", self.chain_id, level=logging.WARNING) as dropped:
            await asyncio.to_thread(self.sink.append, self.chain_id, self.run_number,
                                    self._shipped, data)
        if dropped.error is not None:
            self._pending[:0] = data
            return
        self._shipped += len(data)

    async def ship_until(self, done: asyncio.Event, every_s: float = 0.5) -> None:
        """Ship every `every_s` seconds until `done` is set, then the rest. (Not cancelled
        instead: a chunk the database stored after its caller was cancelled would be sent
        again.)"""
        while not await wait_event(done, every_s):
            await self.ship()
        await self.ship()

    def close(self) -> None:
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                pass
            self._file = None
        self._opened = True  # a log that failed or was closed is not opened again
