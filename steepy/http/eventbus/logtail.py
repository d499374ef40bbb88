"""Live log lines of a chain for `steep.logs.processchains.<id>`: the lines its agent writes
to the chain's log file (steepy/agent/logs.py) after a client registered, as Steep's
EventbusAppender publishes them (one message per line, the line with its newline, header
`runNumber`). The file is read where this machine has it; otherwise, where agents store logs
in the database too (`logs.processChains.database`), from there."""

from __future__ import annotations

from pathlib import Path

from steepy.agent import log_path
from steepy.http.eventbus.messages import Message, log_line
from steepy.registry.interfaces import LogStore

MAX_READ = 1024 * 1024  # bytes read per look: a chain that writes faster is caught up later


class LogTail:
    def __init__(self, log_dir: Path, chain_id: str, group_by_prefix: int = 0,
                 run_number: int | None = None, store: LogStore | None = None):
        self.log_dir = log_dir
        self.store = store
        self.chain_id = chain_id
        self.group_by_prefix = group_by_prefix
        self.run_number = run_number or 1
        self.offset: int | None = None  # None: from the end of what is there when first read
        self._rest = b""  # the start of a line still being written

    @property
    def path(self) -> Path:
        return log_path(self.log_dir, self.chain_id, self.run_number, self.group_by_prefix)

    def _size(self) -> tuple[int | None, bool]:
        """The log's size (None: no log yet) and whether it is a file here."""
        try:
            return self.path.stat().st_size, True
        except FileNotFoundError:
            if self.store is None:
                return None, False
            return self.store.size(self.chain_id, self.run_number), False

    def _read_file(self, end: int) -> bytes:
        with open(self.path, "rb") as f:
            f.seek(self.offset or 0)
            return f.read(end - (self.offset or 0))

    def _read_store(self, end: int) -> bytes:
        if self.store is None:
            return b""
        return self.store.read(self.chain_id, self.run_number, self.offset or 0, end)

    def follow(self, run_number: int) -> None:
        """A new run started: its log is followed from its start."""
        if run_number != self.run_number:
            self.run_number, self.offset, self._rest = run_number, 0, b""

    def read(self) -> list[Message]:
        """The lines written since the last look (blocking: call it in a worker thread)."""
        try:
            size, local = self._size()
        except OSError:
            return []
        if size is None:
            if self.offset is None:
                self.offset = 0  # whatever is written from now on is new
            return []
        if self.offset is None or size < self.offset:  # first look, or rewritten
            self.offset = size if self.offset is None else 0
            self._rest = b""
        end = min(size, self.offset + MAX_READ)
        try:
            data = self._read_file(end) if local else self._read_store(end)
        except OSError:
            return []
        self.offset += len(data)
        buffer = self._rest + data
        if b"\n" not in data:
            self._rest = buffer
            return []
        complete, _, self._rest = buffer.rpartition(b"\n")
        return [log_line(self.chain_id, self.run_number, line + "\n")
                for line in complete.decode("utf-8", errors="replace").split("\n")]
