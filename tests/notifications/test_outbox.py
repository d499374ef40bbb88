"""The outbox on SQLite and PostgreSQL: a delivery is written in the transaction of its
event (never without it, never lost with it), claims are exclusive and end with their lease,
outcomes are recorded."""

from __future__ import annotations

import json
import threading
import time
from datetime import timedelta

import pytest

from steepy.events import ChainFinished, ChainStarted, SubmissionStatusChanged
from steepy.model import Submission, Workflow
from steepy.model.submission import SubmissionStatus as SS
from steepy.events.webhooks import Webhook
from steepy.registry import Registry, open_registry
from steepy.registry.records import add_event, utcnow

A, B = "http://127.0.0.1:9/a", "http://127.0.0.1:9/b"


@pytest.fixture
def registry(database_url: str) -> Registry:
    return open_registry(database_url, [Webhook(A), Webhook(B, ("chain.*:ERROR",), "s")])


def _submit(registry: Registry, sid: str) -> None:
    registry.requests.add_submission(Submission(id=sid, workflow=Workflow(name=sid), name=sid))


def test_a_final_status_writes_one_delivery_per_webhook_that_wants_it(registry) -> None:
    _submit(registry, "s1")  # ACCEPTED
    registry.leases.fetch_next_submission("me")  # RUNNING
    assert registry.outbox.deliveries()[1] == 0
    registry.submissions.finish_submission("s1", SS.ERROR, error_message="broken")
    [delivery], total = registry.outbox.deliveries()
    assert total == 1 and delivery["url"] == A and delivery["status"] == "PENDING"
    event = registry.views.events("s1")[-1]
    assert (delivery["eventId"], delivery["event"]) == (event["id"], "submission.status")
    [claimed] = registry.outbox.claim_deliveries("me", [A, B], 10, 30)
    document = json.loads(claimed.body)
    assert document["event"] == {**event, "submissionId": "s1"}
    assert document["submission"] == {"id": "s1", "name": "s1", "status": "ERROR"}
    # chain.* with status ERROR for the other webhook
    registry.queue.add_event("s1", ChainFinished(run=1, status="ERROR"), "c1")
    registry.queue.add_event("s1", ChainFinished(run=1, status="SUCCESS"), "c2")
    found, total = registry.outbox.deliveries()
    assert total == 2 and found[0]["url"] == B and found[0]["event"] == "chain.finished"


def test_a_transaction_that_fails_leaves_neither_event_nor_delivery(registry) -> None:
    _submit(registry, "s1")
    with pytest.raises(RuntimeError):
        with registry.db.write() as conn:
            add_event(conn, "s1", SubmissionStatusChanged(status="SUCCESS"))
            raise RuntimeError("the change fails after its event was added")
    assert [e["status"] for e in registry.views.events("s1")] == ["ACCEPTED"]
    assert registry.outbox.deliveries()[1] == 0
    # events of a commit keep their ids in order, deliveries or not
    with registry.db.write() as conn:
        add_event(conn, "s1", ChainStarted(run=1, agent="a"), "c")
        add_event(conn, "s1", SubmissionStatusChanged(status="CANCELLED"))
        add_event(conn, "s1", ChainFinished(run=1, status="ERROR"), "c")
    ids = [e["id"] for e in registry.views.events("s1")]
    assert ids == sorted(ids)
    assert sorted(d["eventId"] for d in registry.outbox.deliveries()[0]) == ids[-2:]


def test_a_process_without_webhooks_writes_no_deliveries(database_url: str) -> None:
    plain = open_registry(database_url)
    _submit(plain, "s1")
    plain.requests.cancel_submission("s1")
    assert plain.views.get_submission("s1").status == SS.CANCELLED
    assert plain.outbox.deliveries()[1] == 0


def test_claims_are_exclusive_and_end_with_their_lease(registry) -> None:
    for i in range(20):
        _submit(registry, f"s{i}")
        registry.requests.cancel_submission(f"s{i}")  # CANCELLED: a final status
    claims: dict[str, list[int]] = {}

    def claim(owner: str) -> None:
        got = []
        while batch := registry.outbox.claim_deliveries(owner, [A], 3, 30):
            got += [d.id for d in batch]
        claims[owner] = got

    threads = [threading.Thread(target=claim, args=(f"engine{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    everything = [i for got in claims.values() for i in got]
    assert len(everything) == len(set(everything)) == 20
    assert registry.outbox.claim_deliveries("late", [A], 10, 30) == []
    assert registry.outbox.claim_deliveries("other", [B], 10, 30) == []  # its own URLs only

    first, second, third = sorted(everything)[:3]
    registry.outbox.delivered(first)
    registry.outbox.delivery_failed(second, "not the claimer", "HTTP 500", None)  # ignored
    owner = next(o for o, got in claims.items() if second in got)
    registry.outbox.delivery_failed(second, owner, "HTTP 500", utcnow() - timedelta(seconds=1))
    owner = next(o for o, got in claims.items() if third in got)
    registry.outbox.delivery_failed(third, owner, "HTTP 410: gone", None)
    rows = {d["id"]: d for d in registry.outbox.deliveries(size=100)[0]}
    assert rows[first]["status"] == "DELIVERED" and "lastError" not in rows[first]
    assert rows[second]["status"] == "PENDING" and rows[second]["lastError"] == "HTTP 500"
    assert rows[third]["status"] == "FAILED" and "nextTry" not in rows[third]
    assert [d["id"] for d in registry.outbox.deliveries(failed=True)[0]] == [third]
    claimed = utcnow()
    lease_s = 2.0  # (0.2 s once ran out before the look below, on a loaded machine)
    [again] = registry.outbox.claim_deliveries("late", [A], 10, lease_s)
    assert (again.id, again.attempts) == (second, 2)
    # its lease runs out: another engine takes it, with the same key (due when the lease
    # ends, measured from the claim: a loaded machine was 1.4 s late to look, once)
    due = registry.outbox.next_delivery_due([A])
    assert due is not None and claimed + timedelta(seconds=lease_s) <= due <= utcnow() + \
        timedelta(seconds=lease_s)
    time.sleep(max((due - utcnow()).total_seconds(), 0) + 0.1)
    [taken] = registry.outbox.claim_deliveries("next", [A], 10, 30)
    assert (taken.id, taken.key, taken.attempts) == (second, again.key, 3)
