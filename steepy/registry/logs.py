"""Chains' output in the database: the agent that runs a chain appends its log in chunks, and
any server or command reads it from there when the log file is on another machine."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, insert

from steepy.registry.connector import Connector
from steepy.registry.reads import LogReads
from steepy.registry.records import utcnow
from steepy.registry.tables import log_chunks

_lc = log_chunks.c


class SqlLogStore(LogReads):  # (its reads: reads.py)
    db: Connector

    def append(self, chain_id: str, run_number: int, offset: int, data: bytes) -> None:
        """Bytes `offset` to `offset + len(data)` of a run's log."""
        if data:
            with self.db.write() as conn:
                conn.execute(insert(log_chunks).values(chain_id=chain_id, run_number=run_number,
                                                       offset=offset, data=data, time=utcnow()))

    def forget(self, before: datetime) -> int:
        """Drop chunks written before `before` (retention); returns how many."""
        with self.db.write() as conn:
            return conn.execute(delete(log_chunks).where(_lc.time < before)).rowcount
