"""A client that registers late is caught up on what it set values of (catchup.py): the newest
status, times, priority and agent state of each thing, never a message that counts or adds."""

from __future__ import annotations

from datetime import datetime

from steepy.events import EventKind as K
from steepy.http.eventbus import messages as m
from steepy.http.eventbus.catchup import Recent

NOW = datetime.fromisoformat("2026-11-27T15:00:10Z").timestamp()


def _e(kind: str, second: float, sid: str = "s1", chain: str | None = None, **data) -> dict:
    event = {"id": 1, "time": f"2026-11-27T15:00:{second:06.3f}Z", "kind": kind,
             "submissionId": sid, **data}
    if chain is not None:
        event["chainId"] = chain
    return event


def _one_chain(sid: str, start: float) -> list[dict]:
    """A submission with one chain on agent a1, from ACCEPTED to SUCCESS."""
    chain = sid + "c"
    return [_e(K.SUBMISSION_STATUS, start, sid, status="ACCEPTED"),
            _e(K.SUBMISSION_STATUS, start + 0.01, sid, status="RUNNING"),
            _e(K.CHAIN_REGISTERED, start + 0.02, sid, chain),
            _e(K.CHAIN_STARTED, start + 0.03, sid, chain, run=1, agent="a1"),
            _e(K.CHAIN_FINISHED, start + 1.03, sid, chain, run=1, status="SUCCESS"),
            _e(K.SUBMISSION_STATUS, start + 1.05, sid, status="SUCCESS")]


def test_the_newest_status_of_each_submission_and_nothing_that_counts() -> None:
    recent = Recent(window_s=15)
    recent.add(_one_chain("s1", 1.0) + _one_chain("s2", 3.0)
               + [_e(K.SUBMISSION_STATUS, 5.0, "s3", status="RUNNING")], NOW)
    said = recent.replay(m.SUBMISSION_STATUS_CHANGED, NOW)
    assert [(x.address, x.body) for x in said] == [
        (m.SUBMISSION_STATUS_CHANGED, {"submissionId": "s1", "status": "SUCCESS"}),
        (m.SUBMISSION_STATUS_CHANGED, {"submissionId": "s2", "status": "SUCCESS"}),
        (m.SUBMISSION_STATUS_CHANGED, {"submissionId": "s3", "status": "RUNNING"})]
    [ended, _] = recent.replay(m.SUBMISSION_END_TIME_CHANGED, NOW)
    assert ended.body == {"submissionId": "s1", "endTime": "2026-11-27T15:00:02.050Z"}
    # counted by the list (a chain from one counter to another) or added: never twice
    for address in (m.PROCESS_CHAIN_STATUS_CHANGED, m.PROCESS_CHAINS_ADDED_SIZE,
                    m.SUBMISSION_ADDED, m.PROCESS_CHAINS_ADDED, m.PROCESS_CHAIN_RUN_FINISHED):
        assert recent.replay(address, NOW) == []


def test_an_agent_s_newest_state_is_said_on_its_own_address_only() -> None:
    recent = Recent(window_s=15)
    recent.add(_one_chain("s1", 1.0), NOW)
    assert recent.replay(m.AGENT_BUSY, NOW) == []  # busy, then idle: idle is the newest
    [idle] = recent.replay(m.AGENT_IDLE, NOW)
    assert idle.body == {"id": "a1", "available": True,
                         "stateChangedTime": "2026-11-27T15:00:02.030Z"}
    recent.add([_e(K.CHAIN_STARTED, 9.0, "s2", "s2c", run=1, agent="a1")], NOW)
    assert recent.replay(m.AGENT_IDLE, NOW) == []
    [busy] = recent.replay(m.AGENT_BUSY, NOW)
    assert busy.body["processChainId"] == "s2c" and busy.body["available"] is False


def test_events_older_than_the_window_are_forgotten() -> None:
    recent = Recent(window_s=5)
    recent.add(_one_chain("s1", 1.0), NOW)  # 9 s before NOW: too old already
    recent.add(_one_chain("s2", 7.0), NOW)
    assert [x.body["submissionId"] for x in recent.replay(m.SUBMISSION_STATUS_CHANGED, NOW)] \
        == ["s2"]
    assert recent.replay(m.SUBMISSION_STATUS_CHANGED, NOW + 10) == []
