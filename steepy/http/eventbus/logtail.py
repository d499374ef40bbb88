"""Live log lines of a chain for `steep.logs.processchains.<id>`: the lines its agent writes
to the chain's log file (steepy/agent/logs.py) after a client registered, as Steep's
EventbusAppender publishes them (one message per line, the line with its newline, header
`runNumber`). Only logs this machine can read are followed, like `GET /logs/processchains`."""

from __future__ import annotations

from pathlib import Path

from steepy.agent import log_path
from steepy.http.eventbus.messages import Message, log_line

MAX_READ = 1024 * 1024  # bytes read per look: a chain that writes faster is caught up later


class LogTail:
    def __init__(self, log_dir: Path, chain_id: str, group_by_prefix: int = 0,
                 run_number: int | None = None):
        self.log_dir = log_dir
        self.chain_id = chain_id
        self.group_by_prefix = group_by_prefix
        self.run_number = run_number or 1
        self.offset: int | None = None  # None: from the end of what is there when first read
        self._rest = b""  # the start of a line still being written

    @property
    def path(self) -> Path:
        return log_path(self.log_dir, self.chain_id, self.run_number, self.group_by_prefix)

    def follow(self, run_number: int) -> None:
        """A new run started: its log is followed from its start."""
        if run_number != self.run_number:
            self.run_number, self.offset, self._rest = run_number, 0, b""

    def read(self) -> list[Message]:
        """The lines written since the last look (blocking: call it in a worker thread)."""
        try:
            with open(self.path, "rb") as f:
                size = f.seek(0, 2)
                if self.offset is None or size < self.offset:  # first look, or rewritten
                    self.offset = size if self.offset is None else 0
                    self._rest = b""
                f.seek(self.offset)
                data = f.read(MAX_READ)
        except FileNotFoundError:
            if self.offset is None:
                self.offset = 0  # whatever is written from now on is new
            return []
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
