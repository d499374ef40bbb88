"""Per-chain, per-run log files (reference section 12) that can be tailed while a chain runs."""

from __future__ import annotations

import logging
from pathlib import Path

log = logging.getLogger(__name__)


def log_path(log_dir: Path, chain_id: str, run_number: int = 1, group_by_prefix: int = 0) -> Path:
    """`<dir>/[<prefix>/]<chain id>.log` for run 1, `<chain id>.<run>.log` after."""
    directory = Path(log_dir)
    if group_by_prefix > 0:
        directory = directory / chain_id[:group_by_prefix]
    name = f"{chain_id}.log" if run_number <= 1 else f"{chain_id}.{run_number}.log"
    return directory / name


class ChainLog:
    """Appends output lines and flushes every batch, so readers see lines as they arrive.

    A log that cannot be opened is reported once and then ignored: the chain still runs."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._file = None
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(path, "a", encoding="utf-8", errors="replace")
        except OSError as e:
            log.warning("cannot write process chain log %s: %s", path, e)

    def write_lines(self, lines: list[str]) -> None:
        if self._file is None:
            return
        try:
            self._file.write("\n".join(lines) + "\n")
            self._file.flush()
        except OSError as e:
            log.warning("cannot write process chain log %s: %s", self.path, e)
            self.close()

    def close(self) -> None:
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                pass
            self._file = None
