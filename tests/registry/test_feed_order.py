"""Event ids follow the order of commits, so a reader that has seen id N misses nothing
committed before: on PostgreSQL a transaction that began earlier but commits later must not
leave an event behind the reader's position."""

from __future__ import annotations

import threading

from steepy.events import SubmissionPriority
from steepy.model import Submission, Workflow
from steepy.registry import open_registry
from steepy.registry.records import add_event


def test_a_slow_transactions_event_comes_after_a_faster_ones(postgres_url: str) -> None:
    slow, fast = open_registry(postgres_url), open_registry(postgres_url)  # two processes
    fast.requests.add_submission(Submission(id="s", workflow=Workflow(name="s")))
    start = fast.views.last_event_id()
    inside, release = threading.Event(), threading.Event()

    def slow_transaction() -> None:
        with slow.db.write() as conn:
            add_event(conn, "s", SubmissionPriority(priority=1))  # the slow one
            inside.set()
            assert release.wait(30)

    thread = threading.Thread(target=slow_transaction)
    thread.start()
    assert inside.wait(30)
    fast.queue.add_event("s", SubmissionPriority(priority=2))  # commits while the slow one is open
    seen = fast.views.feed(start)
    assert [e["priority"] for e in seen] == [2]
    release.set()
    thread.join(30)
    later = fast.views.feed(seen[-1]["id"])  # a reader resuming where it was
    assert [e["priority"] for e in later] == [1]


def test_the_feed_holds_agents_arriving_and_leaving(database_url: str) -> None:
    registry = open_registry(database_url)
    registry.leases.heartbeat("engine", [{"id": "a1", "capabilities": ["gpu"], "host": "h"}], 30)
    registry.leases.heartbeat("engine", [{"id": "a1", "capabilities": ["gpu"], "host": "h"}], 30)
    registry.leases.forget_agents("engine")
    kinds = [(e["kind"], e["agent"]) for e in registry.views.feed()]
    assert kinds == [("agent.arrived", "a1"), ("agent.left", "a1")]  # once each
    registry.leases.heartbeat("other", [{"id": "a2"}], 30)
    assert registry.leases.forget_lost_agents(3600) == []
    assert registry.leases.forget_lost_agents(-1) == ["a2"]  # silent since "now + 1 s"
    last = registry.views.feed()[-1]
    assert (last["kind"], last["agent"], last["reason"]) == ("agent.left", "a2", "lost")
