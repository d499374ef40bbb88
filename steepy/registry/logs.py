"""Chains' output in the database: the agent that runs a chain appends its log in chunks, and
any server or command reads it from there when the log file is on another machine."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, func, insert, select

from steepy.registry.connector import Connector
from steepy.registry.records import utcnow
from steepy.registry.tables import log_chunks

_lc = log_chunks.c


class SqlLogStore:
    def __init__(self, db: Connector):
        self.db = db

    def append(self, chain_id: str, run_number: int, offset: int, data: bytes) -> None:
        """Bytes `offset` to `offset + len(data)` of a run's log."""
        if data:
            with self.db.write() as conn:
                conn.execute(insert(log_chunks).values(chain_id=chain_id, run_number=run_number,
                                                       offset=offset, data=data, time=utcnow()))

    def size(self, chain_id: str, run_number: int) -> int | None:
        """How many bytes of the run's log are stored; None: none at all."""
        with self.db.read() as conn:
            return conn.execute(select(func.max(_lc.offset + func.length(_lc.data))).where(
                _lc.chain_id == chain_id, _lc.run_number == run_number)).scalar()

    def read(self, chain_id: str, run_number: int, start: int, end: int) -> bytes:
        """Bytes `start` to `end` (exclusive) of the run's log, as far as stored."""
        if end <= start:
            return b""
        with self.db.read() as conn:
            rows = conn.execute(select(_lc.offset, _lc.data).where(
                _lc.chain_id == chain_id, _lc.run_number == run_number, _lc.offset < end,
                _lc.offset + func.length(_lc.data) > start).order_by(_lc.offset)).all()
        out = bytearray()
        for offset, data in rows:
            begin = max(start, offset, start + len(out)) - offset
            out += data[begin:end - offset]
        return bytes(out)

    def forget(self, before: datetime) -> int:
        """Drop chunks written before `before` (retention); returns how many."""
        with self.db.write() as conn:
            return conn.execute(delete(log_chunks).where(_lc.time < before)).rowcount
