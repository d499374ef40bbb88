"""Where a run's log is (`log_path`) and where it is read from: its file, where the chain ran
on this machine (or logs are on a shared file system), else the copy in the database that
agents keep when the database is shared (`logs.processChains.database`), so servers and
commands anywhere can read it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:  # (at run time: what `logs' imports stays small)
    from steepy.registry import LogStore

CHUNK = 1024 * 1024


def log_path(log_dir: Path, chain_id: str, run_number: int = 1, group_by_prefix: int = 0) -> Path:
    """`<dir>/[<prefix>/]<chain id>.log` for run 1, `<chain id>.<run>.log` after."""
    directory = Path(log_dir)
    if group_by_prefix > 0:
        directory = directory / chain_id[:group_by_prefix]
    name = f"{chain_id}.log" if run_number <= 1 else f"{chain_id}.{run_number}.log"
    return directory / name


@dataclass
class FileLog:
    path: Path
    size: int

    def chunks(self, start: int, length: int) -> Iterator[bytes]:
        with open(self.path, "rb") as f:
            f.seek(start)
            while length > 0:
                chunk = f.read(min(CHUNK, length))
                if not chunk:
                    break  # the file shrank; the reader gets a short body
                length -= len(chunk)
                yield chunk


@dataclass
class StoredLog:
    store: LogStore
    chain_id: str
    run_number: int
    size: int

    def chunks(self, start: int, length: int) -> Iterator[bytes]:
        end = start + length
        while start < end:
            chunk = self.store.read(self.chain_id, self.run_number, start, min(end, start + CHUNK))
            if not chunk:
                break
            start += len(chunk)
            yield chunk


def find_log(log_dir: Path | None, group_by_prefix: int, store: LogStore | None,
             chain_id: str, run_number: int) -> FileLog | StoredLog | None:
    """The run's log, or None if there is none here or in the database."""
    if log_dir is not None:
        path = log_path(log_dir, chain_id, run_number, group_by_prefix)
        try:
            return FileLog(path, os.stat(path).st_size)
        except OSError:
            pass
    if store is not None:
        size = store.size(chain_id, run_number)
        if size is not None:
            return StoredLog(store, chain_id, run_number, size)
    return None
