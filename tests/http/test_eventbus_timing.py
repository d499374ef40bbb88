"""How soon a submission's end follows its last chain's end on Steep's event bus.

Steep's web UI shows a submission's status from `submissionStatusChanged` and its counters
from `processChainStatusChanged`. A list fetched between the two (the chain counted as done,
the submission still RUNNING) shows "Running" until the status message comes, and a page that
loads meanwhile misses that message for good. So the gap must be short: here a one-chain
workflow runs several times against a real `steepy serve` with its default sweep (2 s), and
the status must follow the chain's end within a fraction of a second, every time."""

from __future__ import annotations

import statistics
import time
from datetime import datetime

import pytest

from tests.http.conftest import Server
from tests.http.test_eventbus import SR, EventBus

pytestmark = [pytest.mark.process]

ONE_CHAIN = """api: 4.7.0
name: one
actions:
  - type: execute
    service: sleep
    inputs: [{id: seconds, value: %s}]
"""
RUNS = 8
LIMIT_S = 0.5  # the gap allowed each time; Steep's UI list would show "Running" meanwhile


@pytest.fixture(scope="module")
def default_server(tmp_path_factory) -> Server:
    """A server with the default sweep and heartbeat (2 s), as Steep's UI suite runs it: only
    a wake-up by the chain's end, not a sweep, can end the submission in time."""
    running = Server(tmp_path_factory.mktemp("timing"), "--agents", "2",
                     env={"STEEPY_SCHEDULER_LOOKUPINTERVAL": "2s",
                          "STEEPY_CONTROLLER_HEARTBEATINTERVAL": "2s"})
    yield running
    assert running.stop() == 0


def _seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def _one_run(bus: EventBus, server: Server, seconds: str) -> tuple[float, float]:
    """(arrival gap, commit gap) in seconds between the chain's end and the submission's."""
    sid = server.submit(ONE_CHAIN % seconds)
    arrived: dict[str, float] = {}
    stamps: dict[str, float] = {}
    run_ends: dict[str, float] = {}  # chain id -> its run's end (said just before its status)
    end = time.monotonic() + 30
    pinged = time.monotonic()
    while "submission" not in arrived:
        assert time.monotonic() < end, f"submission {sid} did not end: {bus.received[-5:]}"
        if time.monotonic() - pinged >= 2:
            bus.ping()
            pinged = time.monotonic()
        before = len(bus.received)
        bus.receive(0.05)
        for message in bus.received[before:]:
            address, body = message.get("address"), message.get("body") or {}
            if address == SR + "processChainStatusChanged" and body.get("submissionId") == sid \
                    and body["status"] == "SUCCESS":
                arrived["chain"] = time.monotonic()
                stamps["chainEnd"] = run_ends[body["processChainId"]]
            elif address == SR + "processChainRunFinished":
                run_ends[body["processChainId"]] = _seconds(body["endTime"])
            elif address == SR + "submissionEndTimeChanged" and body.get("submissionId") == sid:
                stamps["submissionEnd"] = _seconds(body["endTime"])
            elif address == SR + "submissionStatusChanged" and body == {
                    "submissionId": sid, "status": "SUCCESS"}:
                arrived["submission"] = time.monotonic()
    assert "chain" in arrived, "the chain's end came after the submission's"
    return arrived["submission"] - arrived["chain"], stamps["submissionEnd"] - stamps["chainEnd"]


def test_the_submission_s_status_follows_its_last_chain_at_once(default_server: Server) -> None:
    bus = EventBus(default_server.url)
    try:
        bus.register(*(SR + n for n in ("processChainStatusChanged", "processChainRunFinished",
                                        "submissionStatusChanged", "submissionEndTimeChanged")))
        bus.quiet_for(0.3)  # registered before anything happens
        gaps = [_one_run(bus, default_server, ("0", "0.2", "1")[i % 3]) for i in range(RUNS)]
    finally:
        bus.close()
    arrival = sorted(round(a, 3) for a, _ in gaps)
    commit = sorted(round(c, 3) for _, c in gaps)
    print(f"arrival gaps (s): {arrival}; median {statistics.median(arrival)}")
    print(f"commit gaps (s): {commit}; median {statistics.median(commit)}")
    assert max(arrival) < LIMIT_S, arrival
    assert max(commit) < LIMIT_S, commit
