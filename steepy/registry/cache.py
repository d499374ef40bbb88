"""Reusable work (extensions 15): the cache entries of chains, looked up by a chain's key.

A chain whose keys were taken gets a row per executable when it is stored (`pending`, no
outputs); when it succeeds, the controller fills in the outputs (`completed`). A chain of a
later submission with the same chain key is reused when every row of an earlier chain is
complete: it is stored SUCCESS at once, with the earlier chain's results (`reused`). All of
it is written in the controller's round (`store_new_chains`, `record_outputs`), with the chains it concerns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Sequence

from sqlalchemy import Connection, bindparam, delete, func, select, update

from steepy import events as ev
from steepy.registry.bulk import insert_rows
from steepy.registry.connector import Connector
from steepy.registry.records import CS, add_events, dump, event_row, load
from steepy.registry.tables import attempts, cache_entries, process_chains

_ce = cache_entries.c
CHUNK = 500  # keys per statement


@dataclass(frozen=True, slots=True)
class Entry:
    """One executable's record of an earlier chain: its outputs, per output argument in
    order, each `{"path", "results", "fingerprint"}`."""

    submission_id: str
    chain_id: str
    executable_id: str
    position: int
    outputs: list[dict]
    inputs: dict | None = None  # its input files' fingerprints by path (`similar')


@dataclass(frozen=True)
class Pending:
    """A row to store with a new chain: one executable's key (and its shape and input
    files, steepy.model.cachekeys)."""

    chain_key: str
    key: str
    chain_id: str
    executable_id: str
    position: int
    shape: str | None = None
    inputs: dict | None = None


@dataclass(frozen=True)
class Reused:
    """A new chain that stands for an earlier one: stored SUCCESS with these results."""

    chain_id: str
    results: dict
    from_submission_id: str
    from_chain_id: str

    def marker(self) -> dict:
        return {"submissionId": self.from_submission_id, "processChainId": self.from_chain_id}


@dataclass
class CacheWrite:
    """What a controller's round stores about reusable work."""

    pending: list[Pending] = field(default_factory=list)
    reused: list[Reused] = field(default_factory=list)
    # (chain id, [outputs of each executable in order]) of chains that succeeded
    completed: list[tuple[str, list[list[dict]]]] = field(default_factory=list)
    # the controller round that feeds the chains reused (steepy.engine.reuse.carried); None:
    # the next one that reads them
    feed_round: int | None = None

    def __bool__(self) -> bool:
        return bool(self.pending or self.reused or self.completed)


class SqlCache:
    def __init__(self, db: Connector):
        self.db = db

    def lookup(self, chain_keys: Sequence[str]) -> dict[str, list[list[Entry]]]:
        """The complete earlier chains of each chain key, newest first, each as its
        entries in order."""
        # chain key -> chain id -> its rows (unpacked: a row's attributes by name cost more
        # than the query when 10,000 chains are reused)
        found: dict[str, dict[str, list[tuple]]] = {}
        keys = sorted(set(chain_keys))
        with self.db.read() as conn:
            for start in range(0, len(keys), CHUNK):
                rows = conn.execute(select(
                    _ce.chain_key, _ce.chain_id, _ce.submission_id, _ce.executable_id,
                    _ce.position, _ce.outputs).where(
                    _ce.chain_key.in_(keys[start:start + CHUNK])).order_by(_ce.seq.desc()))
                for chain_key, chain_id, *rest in rows:
                    chains = found.get(chain_key)
                    if chains is None:
                        chains = found[chain_key] = {}
                    chains.setdefault(chain_id, []).append((chain_id, *rest))
        out: dict[str, list[list[Entry]]] = {}
        for chain_key, chains in found.items():
            for rows in chains.values():  # in order of their newest row, newest first
                if any(r[4] is None for r in rows):
                    continue  # not (yet) succeeded
                if len(rows) > 1:
                    rows.sort(key=lambda r: r[3])
                out.setdefault(chain_key, []).append([
                    Entry(submission_id, chain_id, executable_id, position, load(outputs))
                    for chain_id, submission_id, executable_id, position, outputs in rows])
        return out

    def similar(self, shapes: Sequence[str]) -> dict[str, Entry]:
        """For each shape, the newest complete entry of that shape, with its input files."""
        found: dict[str, Entry] = {}
        wanted = sorted(set(shapes))
        with self.db.read() as conn:
            for start in range(0, len(wanted), CHUNK):
                rows = conn.execute(select(cache_entries).where(
                    _ce.shape.in_(wanted[start:start + CHUNK]), _ce.outputs.is_not(None))
                    .order_by(_ce.seq.desc()))
                for r in rows:
                    if r.shape not in found:
                        found[r.shape] = Entry(r.submission_id, r.chain_id, r.executable_id,
                                               r.position, load(r.outputs), load(r.inputs))
        return found

    def pending(self, chain_ids: Sequence[str], with_fallbacks: Sequence[str] = ()
                ) -> dict[str, list[dict | None] | None]:
        """Those of these chains whose entries wait for their outputs, with the input files
        each entry's key was taken from (by position); None for one that a fallback stood
        in for (among `with_fallbacks`, those that have one): it is not the work of its tools
        (its entries are to be forgotten)."""
        ids = sorted(set(chain_ids))
        fallbacks = set(with_fallbacks)
        found: dict[str, list[tuple[int, str | None]]] = {}
        rescued: set[str] = set()
        with self.db.read() as conn:
            for start in range(0, len(ids), CHUNK):
                part = ids[start:start + CHUNK]
                for chain_id, position, inputs in conn.execute(select(
                        _ce.chain_id, _ce.position, _ce.inputs).where(
                        _ce.chain_id.in_(part), _ce.outputs.is_(None))):
                    found.setdefault(chain_id, []).append((position, inputs))
                asked = [chain_id for chain_id in part if chain_id in fallbacks]
                if asked:
                    rescued.update(conn.execute(select(attempts.c.chain_id).where(
                        attempts.c.chain_id.in_(asked), attempts.c.fallback_for.is_not(None),
                        attempts.c.outcome == "SUCCESS").distinct()).scalars())
        return {chain_id: None if chain_id in rescued else
                [load(inputs) for _, inputs in sorted(rows)] for chain_id, rows in found.items()}

    def forget(self, chain_ids: Sequence[str]) -> int:
        """Drop the entries of these chains (their outputs are gone or changed)."""
        ids = sorted(set(chain_ids))
        count = 0
        if ids:
            with self.db.write() as conn:
                for start in range(0, len(ids), CHUNK):
                    count += conn.execute(delete(cache_entries).where(
                        _ce.chain_id.in_(ids[start:start + CHUNK]))).rowcount
        return count

    def reused(self, submission_id: str) -> int:
        """How many chains of a submission were reused."""
        with self.db.read() as conn:
            return conn.execute(select(func.count()).select_from(process_chains).where(
                process_chains.c.submission_id == submission_id,
                process_chains.c.reused.is_not(None))).scalar() or 0

    def entries(self, submission_id: str) -> list[Entry]:
        """The complete entries a submission recorded (what `steepy gc' drops with it)."""
        with self.db.read() as conn:
            rows = conn.execute(select(cache_entries).where(
                _ce.submission_id == submission_id, _ce.outputs.is_not(None))
                .order_by(_ce.seq)).all()
        return [Entry(r.submission_id, r.chain_id, r.executable_id, r.position,
                      load(r.outputs)) for r in rows]


def still_reusable(conn: Connection, write: CacheWrite | None) -> None:
    """Keep in `write.reused' (in place: the controller feeds what it holds) only the reuse
    of earlier chains whose records are still there. The garbage collector may have deleted
    them since the lookup, and then their files; those chains run instead. On PostgreSQL
    the records are locked (FOR SHARE) until this transaction ends: the collector deletes
    them after it, and then sees this reuse, which keeps their files (housekeeping.py)."""
    if write is None or not write.reused:
        return
    ids, found = sorted({r.from_chain_id for r in write.reused}), set()
    for start in range(0, len(ids), CHUNK):
        found.update(conn.execute(select(_ce.chain_id).where(  # (no DISTINCT with FOR SHARE)
            _ce.chain_id.in_(ids[start:start + CHUNK])).with_for_update(read=True)).scalars())
    if len(found) < len(ids):
        write.reused[:] = [r for r in write.reused if r.from_chain_id in found]


def reused_columns(write: CacheWrite | None) -> dict[str, dict[str, Any]]:
    """The columns of the new chains that reuse earlier work, by chain id: they are inserted
    SUCCESS with the earlier results, marked, and fed in `feed_round` (one statement with the
    other new chains, not an insert and then an update)."""
    if write is None or not write.reused:
        return {}
    return {r.chain_id: {"status": CS.SUCCESS, "results": dump(r.results),
                         "reused": dump(r.marker()), "reused_from": r.from_submission_id,
                         "fed_round": write.feed_round}
            for r in write.reused}


def store_new_chains(conn: Connection, submission_id: str, write: CacheWrite,
                     now: datetime) -> None:
    """In the controller's round, after its new chains were inserted (those reused with
    `reused_columns`): their keys, and the timeline's word on those reused."""
    if write.pending:
        insert_rows(conn, cache_entries, [
            {"chain_key": p.chain_key, "key": p.key, "submission_id": submission_id,
             "chain_id": p.chain_id, "executable_id": p.executable_id,
             "position": p.position, "created_time": now, "shape": p.shape,
             "inputs": None if p.inputs is None else dump(p.inputs)} for p in write.pending])
    if write.reused:
        add_events(conn, [event_row(submission_id, ev.ChainReused(
            from_submission_id=r.from_submission_id, from_chain_id=r.from_chain_id),
            r.chain_id, now) for r in write.reused])


def record_outputs(conn: Connection, write: CacheWrite, now: datetime) -> None:
    """In the controller's round: the outputs of the chains that succeeded."""
    if write.completed:
        conn.execute(update(cache_entries).where(
            _ce.chain_id == bindparam("b_chain"), _ce.position == bindparam("b_position"))
            .values(outputs=bindparam("b_outputs"), completed_time=now), [
            {"b_chain": chain_id, "b_position": position, "b_outputs": dump(outputs)}
            for chain_id, per_executable in write.completed
            for position, outputs in enumerate(per_executable)])
