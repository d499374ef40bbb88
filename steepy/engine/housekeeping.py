"""The garbage collector (Steep's, reference 12): deletes submissions that finished before
now - `garbageCollector.retention.submissions`, with everything stored of them, their log
files and their temporary outputs under tmpPath; their results under outPath only when
`garbageCollector.retention.results` is set and they finished before now - that.

It works in batches (up to `batch` submissions per transaction, fewer when a transaction
takes longer than `transaction_s`): the batch's rows first, each submission read again as it
is deleted (one retried since it was listed stays, and so do its files), then their files,
so that no reuse of their work is stored after its files went. What files a batch leaves is
written with its deletion (the registry's leftovers) and dropped once they are gone: a
collector killed in between leaves them to the next, which deletes them first. Where tmpPath
is outPath, a submission's temporary directory holds its results: it goes only as results
do. Results deleted before their submission's records take the reuse records (extensions 15)
that name their files along, dropped before the files go: a crash in between leaves files
that no reuse record names (deleted by the next run). `steepy gc` runs it once; engines run
it on `garbageCollector.cron`."""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from steepy.agent.logsource import log_path
from steepy.model.common import strings_in, utcnow
from steepy.model.durations import later
from steepy.registry import Registry

GC_TIMER = "garbageCollector"  # the engines' timer (registry table `timers')
ROW_KINDS = ("submissions", "processChains", "runs", "attempts", "events", "logChunks",
             "cacheEntries")
FILE_KINDS = ("logFiles", "tmpDirs", "resultDirs")
KEPT_KINDS = ("reusedElsewhere",)  # directories kept: a kept submission reuses their files


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
    counts: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(ROW_KINDS + FILE_KINDS + KEPT_KINDS, 0))
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
        if self.counts["reusedElsewhere"]:
            parts += (f"; kept {self.counts['reusedElsewhere']} directories whose files "
                      "submissions kept reused")
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
    records, results = (None if ms is None else later(now, -ms)
                        for ms in (settings.retention_submissions_ms,
                                   settings.retention_results_ms))
    report.cutoff, report.results_cutoff = records, results
    files = _Files(registry, settings, report.counts, dry_run)
    if records is not None and not dry_run:  # what a collector killed mid-batch left
        left = registry.housekeeping.leftovers()
        if left:
            files.of_batch(left, records, results)
            registry.housekeeping.forget_leftovers(old.id for old in left)
    after, size = 0, settings.batch
    while records is not None and (
            batch := registry.housekeeping.old_submissions(records, size, after)):
        after = batch[-1].seq
        begun = time.monotonic()
        # the records first, then the files: a run that reuses their work (its lookup found
        # them) stores that in a transaction of its own that finds them gone and runs the
        # chains instead, or commits first and is seen below (its files are kept)
        # (read again as they are deleted: one retried since it was listed stays)
        deleted, gone = registry.housekeeping.delete_submissions([o.id for o in batch],
                                                                 dry_run, records, batch)
        took = time.monotonic() - begun
        files.of_batch([old for old in batch if old.id in set(gone)], records, results)
        if gone and not dry_run:
            registry.housekeeping.forget_leftovers(gone)
        report.longest_transaction_s = max(report.longest_transaction_s, took)
        # a slow database (or a busy machine) gets smaller batches: writers wait less
        size = max(10, min(settings.batch, int(size * settings.transaction_s / max(took, 1e-3))))
        for kind, number in deleted.items():
            report.counts[kind] += number
        report.batches += 1
    # results kept for less time than their records: those of submissions still recorded
    after = 0
    while results is not None and (records is None or results > records) and (
            batch := registry.housekeeping.old_submissions(results, settings.batch, after)):
        after = batch[-1].seq
        if dry_run and records is not None:  # those older than `records' counted above
            batch = [old for old in batch if old.end_time >= records]
        files.results_of(batch, results)
    report.seconds = time.monotonic() - started
    return report


class _Files:
    """What deleted submissions leave on disk: log files, the temporary directory, the result
    directory. A submission's directories stay while a submission that is kept reused its
    work (extensions 15: its chains name those files, and its stored results are links
    to them; `reusedElsewhere` counts them), and go with the last such submission."""

    def __init__(self, registry: Registry, settings: GcSettings, counts: dict[str, int],
                 dry_run: bool):
        self.housekeeping, self.cache = registry.housekeeping, registry.cache
        self.settings, self.counts, self.dry_run = settings, counts, dry_run
        self.tmp, self.out = Path(settings.tmp_path), Path(settings.out_path)
        # tmpPath is outPath: a submission's temporary directory holds its results too
        self.one_folder = os.path.realpath(self.tmp) == os.path.realpath(self.out)

    def of_batch(self, batch: list, records: datetime, results: datetime | None) -> None:
        """The files of a batch whose rows were just deleted (finished before `records')."""
        ids = [old.id for old in batch]
        for old in batch:
            for chain_id, run_number in old.runs:
                self.counts["logFiles"] += _remove(log_path(
                    Path(self.settings.log_dir), chain_id, run_number,
                    self.settings.log_group_by_prefix), self.dry_run)
        # those whose records went before and that only this batch still reused
        earlier = set().union(*(old.reused_from for old in batch)) - set(ids)
        gone = sorted(earlier - self.housekeeping.recorded(earlier)) if earlier else []
        expired = [] if results is None else [old.id for old in batch if old.end_time < results]
        if not self.one_folder:  # (else it holds results, which go only as results do)
            self._directories(ids + gone, self.tmp, records, "tmpDirs")
        if results is not None:
            self._directories(expired + gone, self.out, results, "resultDirs")

    def results_of(self, batch: list, results: datetime) -> None:
        """The result directories of recorded submissions that finished before `results'.
        Their records stay, but not the reuse records (extensions 15) of chains whose outputs
        are in such a directory: those are dropped first, so that no lookup finds them once
        the files go; then which directories go is decided again (a submission may have
        reused one meanwhile), and those go."""
        # (read again: one retried since it was listed runs again, its results with it)
        ids = sorted(self.housekeeping.finished_before([old.id for old in batch], results))
        kept = self.housekeeping.reused_by_kept(ids, results)
        for submission_id in ids:
            if submission_id not in kept:
                self._forget_stored(submission_id)
        self._directories(ids, self.out, results, "resultDirs")

    def _forget_stored(self, submission_id: str) -> None:
        """Drop the reuse records of a submission's chains that name files in its result
        directory, if that is there (those of chains with no output in it stay: their files
        are under tmpPath, which its records keep)."""
        folder = self.out / submission_id
        if not (folder.exists() or folder.is_symlink()):
            return
        within = _Within(folder)
        entries = self.cache.entries(submission_id)
        chains = sorted({e.chain_id for e in entries if any(within(o) for o in e.outputs)})
        if not chains:
            return
        self.counts["cacheEntries"] += (sum(e.chain_id in chains for e in entries)
                                        if self.dry_run else self.cache.forget(chains))

    def _directories(self, ids: list[str], base: Path, before: datetime, kind: str) -> None:
        reused = self.housekeeping.reused_by_kept(ids, before) if ids else set()
        for submission_id in ids:
            if submission_id in reused:
                self.counts["reusedElsewhere"] += (base / submission_id).exists()
            else:
                self.counts[kind] += _remove(base / submission_id, self.dry_run)


class _Within:
    """Whether a recorded output (`{"path", "results"}`, extensions 15) names a file in a
    folder or the folder itself (paths as they are, and with symbolic links resolved)."""

    def __init__(self, folder: Path):
        self.folders = {os.path.abspath(folder), os.path.realpath(folder)}

    def __call__(self, output: dict) -> bool:
        return any(self._in(p) for p in strings_in([output.get("path"), output.get("results")])
                   if p)

    def _in(self, path: str) -> bool:
        candidates = {os.path.abspath(path)}
        if len(self.folders) > 1:  # the folder is reached through a symbolic link
            candidates.add(os.path.realpath(path))
        return any(c == f or c.startswith(f.rstrip(os.sep) + os.sep)
                   for c in candidates for f in self.folders)
