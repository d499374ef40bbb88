"""Engines that look for abandoned submissions at the same moment: exactly one of them takes
each (on PostgreSQL an adopter that waited for another's row lock reads the row again and
finds its lease taken), so no submission is driven by two controllers."""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import select

from steepy.registry import open_registry
from steepy.registry.leases import RUN_OWNER
from steepy.registry.tables import submissions
from tests.engine.test_engine import _example, _submit

pytestmark = [pytest.mark.process]  # (threads on real databases)

ADOPTERS = 4
ROUNDS = 8


def _adopt_together(url: str, only: str) -> list[list[str]]:
    registries = [open_registry(url) for _ in range(ADOPTERS)]
    barrier = threading.Barrier(ADOPTERS)
    taken: list[list[str]] = [[] for _ in range(ADOPTERS)]

    def adopt(i: int) -> None:
        barrier.wait()
        found = registries[i].leases.adopt_submissions(f"{RUN_OWNER}adopter{i}", 30, only,
                                                       abandoned=True)
        taken[i] = [s.id for s in found]

    threads = [threading.Thread(target=adopt, args=(i,)) for i in range(ADOPTERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for registry in registries:
        registry.close()
    return taken


def test_exactly_one_engine_adopts_an_abandoned_submission(database_url) -> None:
    registry = open_registry(database_url)
    for _ in range(ROUNDS):
        sid = _submit(registry, _example("linear.yaml"))
        registry.leases.fetch_next_submission(RUN_OWNER + "dead", 0.01, only=sid)
        time.sleep(0.03)  # its lease is over
        taken = _adopt_together(database_url, sid)
        assert sorted(ids for ids in taken if ids) == [[sid]], taken
        with registry.db.read() as conn:
            owner = conn.execute(select(submissions.c.owner)
                                 .where(submissions.c.id == sid)).scalar()
        winner = next(i for i, ids in enumerate(taken) if ids)
        assert owner == f"{RUN_OWNER}adopter{winner}"
    registry.close()
