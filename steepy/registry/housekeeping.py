"""The garbage collector's deletions (reference 12): finished submissions older than the
retention, with their chains, runs, attempts, events and log chunks. A caller takes them in
batches (`old_submissions`, keyset by insertion order) and deletes each batch in one short
transaction (`delete_submissions`), so engines that write meanwhile wait at most that long."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Iterable

from sqlalchemy import Connection, delete, func, insert, or_, select

from steepy.model.common import as_utc
from steepy.model.submission import FINISHED_SUBMISSION
from steepy.registry.connector import Connector
from steepy.registry.tables import (attempts, cache_entries, events, gc_leftovers, log_chunks,
                                    process_chains, runs, submissions)

_sc = submissions.c
_pc = process_chains.c
CHUNK = 1000  # ids per statement
TABLES = (("logChunks", log_chunks, log_chunks.c.chain_id),
          ("attempts", attempts, attempts.c.chain_id),
          ("runs", runs, runs.c.chain_id))


@dataclass
class OldSubmission:
    """A finished submission the collector may delete, with what it left on disk."""

    id: str
    seq: int
    end_time: datetime
    runs: list[tuple[str, int]] = field(default_factory=list)  # (chain id, run number)
    # the submissions whose work its chains reused: its chains read their files
    reused_from: set[str] = field(default_factory=set)


class SqlHousekeeping:
    def __init__(self, db: Connector):
        self.db = db

    def old_submissions(self, before: datetime, limit: int,
                        after_seq: int = 0) -> list[OldSubmission]:
        """Up to `limit' submissions that finished before `before', in insertion order
        after `after_seq', with their chains' runs."""
        with self.db.read() as conn:
            rows = conn.execute(select(_sc.id, _sc.seq, _sc.end_time).where(
                _sc.seq > after_seq, _sc.status.in_(sorted(FINISHED_SUBMISSION)),
                _sc.end_time < before).order_by(_sc.seq).limit(limit)).all()
            found = {r.id: OldSubmission(r.id, r.seq, as_utc(r.end_time)) for r in rows}
            if found:
                for sid, chain_id, run_number in conn.execute(
                        select(_pc.submission_id, _pc.id, runs.c.run_number)
                        .join(runs, runs.c.chain_id == _pc.id)
                        .where(_pc.submission_id.in_(list(found)))):
                    found[sid].runs.append((chain_id, run_number))
                for sid, earlier in conn.execute(
                        select(_pc.submission_id, _pc.reused_from).distinct().where(
                            _pc.submission_id.in_(list(found)), _pc.reused_from.is_not(None))):
                    found[sid].reused_from.add(earlier)
        return list(found.values())

    def reused_by_kept(self, submission_ids: Iterable[str], before: datetime) -> set[str]:
        """Those of these submissions whose work a chain of a submission that did not finish
        before `before' reused (extensions 15): its chains name their files."""
        ids, found = sorted(set(submission_ids)), set()
        kept = or_(_sc.status.not_in(sorted(FINISHED_SUBMISSION)), _sc.end_time.is_(None),
                   _sc.end_time >= before)
        with self.db.read() as conn:
            for start in range(0, len(ids), CHUNK):
                found.update(conn.execute(
                    select(_pc.reused_from).distinct().join(submissions,
                                                            _sc.id == _pc.submission_id)
                    .where(_pc.reused_from.in_(ids[start:start + CHUNK]), kept)).scalars())
        return found

    def recorded(self, submission_ids: Iterable[str]) -> set[str]:
        """Those of these submissions that have a record."""
        ids, found = sorted(set(submission_ids)), set()
        with self.db.read() as conn:
            for start in range(0, len(ids), CHUNK):
                found.update(conn.execute(select(_sc.id).where(
                    _sc.id.in_(ids[start:start + CHUNK]))).scalars())
        return found

    def delete_submissions(self, submission_ids: list[str], dry_run: bool = False,
                           before: datetime | None = None,
                           leaving: Iterable[OldSubmission] = ()
                           ) -> tuple[dict[str, int], list[str]]:
        """Delete submissions and everything stored of them, in one transaction; the number
        of rows per kind, and the submissions deleted. With `before', only those that, read
        again in this transaction, still finished before it (one retried since they were
        listed is RUNNING: it stays). Those of `leaving' deleted are recorded as leftovers
        (`leftovers'), whose files the caller deletes next. With `dry_run', only count them."""
        counts: dict[str, int] = {}
        with (self.db.read() if dry_run else self.db.write()) as conn:
            if before is not None:
                submission_ids = _finished_before(conn, submission_ids, before, not dry_run)
            deleted = set(submission_ids)
            left = [{"submission_id": old.id, "files": _files_text(old)} for old in leaving
                    if old.id in deleted]
            if left and not dry_run:
                conn.execute(insert(gc_leftovers), left)
            chain_ids = list(conn.execute(select(_pc.id).where(
                _pc.submission_id.in_(submission_ids))).scalars())
            parts: list[tuple[str, Any, Any, list[str]]] = [
                *[(name, table, column, chain_ids) for name, table, column in TABLES],
                ("events", events, events.c.submission_id, submission_ids),
                # reusable work (extensions 15) goes with its submission: no record is left
                # that names files the collector deletes
                ("cacheEntries", cache_entries, cache_entries.c.submission_id, submission_ids),
                ("processChains", process_chains, _pc.submission_id, submission_ids),
                ("submissions", submissions, _sc.id, submission_ids)]
            for name, table, column, ids in parts:
                counts[name] = 0
                for start in range(0, len(ids), CHUNK):  # index lookups, bounded parameters
                    where = column.in_(ids[start:start + CHUNK])
                    counts[name] += (conn.execute(select(func.count()).select_from(table)
                                                  .where(where)).scalar() or 0 if dry_run
                                     else conn.execute(delete(table).where(where)).rowcount)
        return counts, submission_ids

    def leftovers(self) -> list[OldSubmission]:
        """Deleted submissions whose files may be left (`delete_submissions')."""
        with self.db.read() as conn:
            rows = conn.execute(select(gc_leftovers).order_by(
                gc_leftovers.c.submission_id)).all()
        return [_files_of(r.submission_id, r.files) for r in rows]

    def forget_leftovers(self, submission_ids: Iterable[str]) -> None:
        """Their files are gone (or kept, as the collector decided)."""
        ids = sorted(set(submission_ids))
        with self.db.write() as conn:
            for start in range(0, len(ids), CHUNK):
                conn.execute(delete(gc_leftovers).where(
                    gc_leftovers.c.submission_id.in_(ids[start:start + CHUNK])))

    def finished_before(self, submission_ids: Iterable[str], before: datetime) -> set[str]:
        """Those of these submissions that finished before `before', read now (one retried
        meanwhile has not)."""
        with self.db.read() as conn:
            return set(_finished_before(conn, sorted(set(submission_ids)), before, False))


def _finished_before(conn: Connection, ids: list[str], before: datetime,
                     lock: bool) -> list[str]:
    """Those of `ids' that finished before `before', in their order; with `lock', their rows
    held until the transaction ends (PostgreSQL: a retry waits for the deletion)."""
    found: set[str] = set()
    for start in range(0, len(ids), CHUNK):
        query = select(_sc.id).where(_sc.id.in_(ids[start:start + CHUNK]),
                                     _sc.status.in_(sorted(FINISHED_SUBMISSION)),
                                     _sc.end_time < before)
        found.update(conn.execute(query.with_for_update() if lock else query).scalars())
    return [i for i in ids if i in found]


def _files_text(old: OldSubmission) -> str:
    return json.dumps({"runs": old.runs, "reusedFrom": sorted(old.reused_from),
                       "endTime": old.end_time.isoformat()})


def _files_of(submission_id: str, text: str) -> OldSubmission:
    files = json.loads(text)
    return OldSubmission(submission_id, 0, as_utc(datetime.fromisoformat(files["endTime"])),
                         [(c, int(n)) for c, n in files["runs"]], set(files["reusedFrom"]))
