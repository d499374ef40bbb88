"""The garbage collector (Steep's, reference 12): deletes submissions that finished before
now - `garbageCollector.retention.submissions`, with everything stored of them, their log
files and their temporary outputs under tmpPath; their results under outPath only when
`garbageCollector.retention.results` is set and they finished before now - that.

It works in batches (up to `batch` submissions per transaction, fewer when a transaction
takes longer than `transaction_s`): files first, then the batch's
rows, so a crash in between leaves rows whose files are gone (deleted by the next run), never
files nobody knows of. `steepy gc` runs it once; engines run it on `garbageCollector.cron`."""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from steepy.agent.logs import log_path
from steepy.model.common import utcnow
from steepy.registry import Registry

GC_TIMER = "garbageCollector"  # the engines' timer (registry table `timers')
ROW_KINDS = ("submissions", "processChains", "runs", "attempts", "events", "logChunks",
             "cacheEntries")
FILE_KINDS = ("logFiles", "tmpDirs", "resultDirs")


@dataclass(frozen=True)
class GcSettings:
    cron: str = "0 0 0 * * ?"  # Quartz
    retention_submissions_ms: int | None = None  # None: submissions are kept
    retention_results_ms: int | None = None  # None: outPath results are kept
    tmp_path: str = ".steepy/tmp"
    out_path: str = ".steepy/out"
    log_dir: str = "logs/processchains"
    log_group_by_prefix: int = 0
    batch: int = 500  # submissions per transaction, at most
    transaction_s: float = 0.25  # fewer when a batch takes longer than this

    @classmethod
    def from_config(cls, config) -> "GcSettings":
        gc = config.garbage_collector
        return cls(gc.cron, gc.retention.submissions, gc.retention.results, config.tmp_path,
                   config.out_path, config.logs.process_chains.path,
                   config.logs.process_chains.group_by_prefix)


@dataclass
class GcReport:
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ROW_KINDS + FILE_KINDS, 0))
    batches: int = 0
    longest_transaction_s: float = 0.0
    seconds: float = 0.0
    dry_run: bool = False
    cutoff: datetime | None = None  # None: retention.submissions is not set
    results_cutoff: datetime | None = None  # None: retention.results is not set

    def summary(self) -> str:
        if self.cutoff is None and self.results_cutoff is None:
            return "nothing to do (garbageCollector.retention.submissions is not set)"
        verb = "would delete" if self.dry_run else "deleted"
        parts = ", ".join(f"{self.counts[k]} {k}" for k in ROW_KINDS + FILE_KINDS)
        cutoff = self.cutoff or self.results_cutoff
        assert cutoff is not None
        return (f"{verb} {parts} (finished before {cutoff.isoformat(timespec='seconds')}; "
                f"{self.batches} batch(es), {self.seconds:.1f} s, longest transaction "
                f"{self.longest_transaction_s * 1000:.0f} ms)")


def _remove(path: Path, dry_run: bool) -> int:
    """1 if `path' (a file or a folder) was there (and is now gone), else 0."""
    try:
        if path.is_dir() and not path.is_symlink():
            if not dry_run:
                shutil.rmtree(path, ignore_errors=True)
            return 1
        if path.exists() or path.is_symlink():
            if not dry_run:
                path.unlink(missing_ok=True)
            return 1
    except OSError:
        pass
    return 0


def collect_garbage(registry: Registry, settings: GcSettings, now: datetime | None = None,
                    dry_run: bool = False) -> GcReport:
    """Run the collector once; with `dry_run', count what it would delete."""
    started = time.monotonic()
    report = GcReport(dry_run=dry_run)
    now = now or utcnow()
    records, results = (None if ms is None else now - timedelta(milliseconds=ms)
                        for ms in (settings.retention_submissions_ms,
                                   settings.retention_results_ms))
    report.cutoff, report.results_cutoff = records, results
    tmp, out, logs = Path(settings.tmp_path), Path(settings.out_path), Path(settings.log_dir)
    counts = report.counts
    after, size = 0, settings.batch
    while records is not None and (
            batch := registry.housekeeping.old_submissions(records, size, after)):
        after = batch[-1].seq
        for old in batch:
            for chain_id, run_number in old.runs:
                counts["logFiles"] += _remove(log_path(logs, chain_id, run_number,
                                                       settings.log_group_by_prefix), dry_run)
            counts["tmpDirs"] += _remove(tmp / old.id, dry_run)
            if results is not None and old.end_time < results:
                counts["resultDirs"] += _remove(out / old.id, dry_run)
        begun = time.monotonic()
        deleted = registry.housekeeping.delete_submissions([o.id for o in batch], dry_run)
        took = time.monotonic() - begun
        report.longest_transaction_s = max(report.longest_transaction_s, took)
        # a slow database (or a busy machine) gets smaller batches: writers wait less
        size = max(10, min(settings.batch, int(size * settings.transaction_s / max(took, 1e-3))))
        for kind, number in deleted.items():
            counts[kind] += number
        report.batches += 1
    # results kept for less time than their records: those of submissions still recorded
    after = 0
    while results is not None and (records is None or results > records) and (
            batch := registry.housekeeping.old_submissions(results, settings.batch, after)):
        after = batch[-1].seq
        for old in batch:
            if dry_run and records is not None and old.end_time < records:
                continue  # counted above already
            counts["resultDirs"] += _remove(out / old.id, dry_run)
    report.seconds = time.monotonic() - started
    return report
