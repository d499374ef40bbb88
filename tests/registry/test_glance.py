"""An idle engine's look in one read (registry/glance.py): it says what the parts' own reads
say (the queue's outlook, the next schedule's fire time, whether there is a submission to
take, on the leases' clock), writes nothing, and on PostgreSQL is one round trip where the
parts' reads were nine."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from steepy.model import ProcessChain, Submission, Workflow
from steepy.model.clock import VirtualClock
from steepy.model.common import utcnow
from steepy.model.ids import unique_id
from steepy.model.schedule import Schedule
from steepy.model.submission import ProcessChainStatus as CS
from steepy.model.triggers import parse_trigger
from steepy.registry import ClaimFor, Registry, open_registry
from steepy.registry.glance import glance
from tests.registry.chains import store_chains
from tests.registry.test_postgres_round_trips import _round_trips, _traced


def _claim(caps: set[str] = frozenset(), only: set[str] | None = None) -> ClaimFor:
    return ClaimFor("a", frozenset(caps), None if only is None else frozenset(only))


def _says_what_the_parts_say(registry: Registry, claims: list[ClaimFor]) -> bool:
    seen = glance(registry, claims, True)
    assert seen is not None
    assert seen.outlook == registry.queue.outlook(claims)
    assert seen.next_due == registry.schedules.next_due()
    return seen.may_take


def test_a_glance_says_what_the_parts_say(database_url: str) -> None:
    clock = VirtualClock()
    registry = open_registry(database_url, clock=clock)
    try:
        claims = [[_claim()], [_claim(), _claim({"gpu"})], []]
        commits = registry.db.commits
        assert not any(_says_what_the_parts_say(registry, c) for c in claims)  # nothing yet
        assert registry.db.commits == commits  # (looks only read)
        registry.requests.add_submission(Submission(id="s", workflow=Workflow(name="s")))
        store_chains(registry, "s", [ProcessChain(id="gpu", required_capabilities=["gpu"]),
                                     ProcessChain(id="c")])
        assert all(_says_what_the_parts_say(registry, c) for c in claims)  # s is ACCEPTED
        assert registry.leases.fetch_next_submission("me", lease_s=10).id == "s"
        record, run = registry.queue.claim_chain("a")
        registry.queue.finish_run(record.chain.id, run, "ERROR", CS.PAUSED, error_message="boom",
                                  auto_resume_after=utcnow() + timedelta(seconds=30))
        submission = Submission(id=unique_id(), workflow=Workflow(name="n"), name="n")
        registry.schedules.add_schedule(Schedule.of(
            unique_id(), submission, parse_trigger(None, "1h", None, utcnow())))
        commits = registry.db.commits
        assert not any(_says_what_the_parts_say(registry, c) for c in claims)  # leased
        assert registry.db.commits == commits  # reads only
        clock.advance(11)  # the lease ran out (on the leases' clock): it may be adopted
        assert all(_says_what_the_parts_say(registry, c) for c in claims)
        assert registry.leases.adopt_submissions("other", 10)
        assert glance(registry, [_claim(only={"s"})], True) is None  # each part reads
    finally:
        registry.close()


def test_a_glance_is_one_round_trip(postgres_url: str, tmp_path: Path) -> None:
    registry = open_registry(postgres_url)
    try:
        glance(registry, [_claim()], True)  # (the schedules' first look is their own)
        found: list = []
        sent = _traced(registry.db, tmp_path / "trace", 1,
                       lambda _: found.append(glance(registry, [_claim({"gpu"})], True)))
        assert found[0].outlook == (False, None) and not found[0].may_take
        assert _round_trips(tmp_path / "trace") == 1, sent
        assert len([q for q in sent if "SELECT" in q]) == 5, sent
    finally:
        registry.close()

