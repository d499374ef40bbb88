"""steepy's timeline events as Steep's event bus messages (the bodies of Steep's
NotifyingSubmissionRegistry, RemoteAgentRegistry, agents' busy markers and EventbusAppender),
and the SockJS / Vert.x bridge framing."""

from __future__ import annotations

import json

import pytest

from steepy.http.eventbus import messages as m
from steepy.http.eventbus import sockjs
from steepy.http.eventbus.messages import Memory, Message, translate

T0, T1 = "2026-11-23T10:00:00.5Z", "2026-11-23T10:00:07.25Z"


def _e(kind: str, sid: str | None = "s1", chain: str | None = None, time: str = T0,
       **data) -> dict:
    event = {"id": 1, "time": time, "kind": kind, **data}
    if sid is not None:
        event["submissionId"] = sid
    if chain is not None:
        event["chainId"] = chain
    return event


def test_an_accepted_submission_is_added_without_its_workflow() -> None:
    submission = {"id": "s1", "name": "w", "workflow": {"api": "4.7.0"}, "priority": 3,
                  "status": "RUNNING", "requiredCapabilities": ["docker"], "source": "api: 4.7.0",
                  "startTime": T0}
    out = translate([_e("submission.status", status="ACCEPTED", submission=submission)], Memory())
    assert out == [Message(m.SUBMISSION_ADDED, {
        "id": "s1", "name": "w", "priority": 3, "status": "ACCEPTED",
        "requiredCapabilities": ["docker"], "source": "api: 4.7.0"})]


def test_submission_running_then_finished_with_an_error() -> None:
    memory = Memory()
    out = translate([_e("submission.status", status="RUNNING"),
                     _e("submission.status", status="ERROR", time=T1, errorMessage="boom")],
                    memory)
    assert out == [
        Message(m.SUBMISSION_STATUS_CHANGED, {"submissionId": "s1", "status": "RUNNING"}),
        Message(m.SUBMISSION_START_TIME_CHANGED, {"submissionId": "s1", "startTime": T0}),
        Message(m.SUBMISSION_END_TIME_CHANGED, {"submissionId": "s1", "endTime": T1}),
        Message(m.SUBMISSION_STATUS_CHANGED, {"submissionId": "s1", "status": "ERROR"}),
        Message(m.SUBMISSION_ERROR_MESSAGE_CHANGED, {"submissionId": "s1",
                                                     "errorMessage": "boom"})]


def test_a_retried_submission_keeps_its_start_time_and_loses_end_and_error() -> None:
    memory = Memory()
    assert translate([_e("submission.retried", previous="ERROR")], memory) == [
        Message(m.SUBMISSION_END_TIME_CHANGED, {"submissionId": "s1", "endTime": None}),
        Message(m.SUBMISSION_ERROR_MESSAGE_CHANGED, {"submissionId": "s1", "errorMessage": None})]
    # the status may come in the next batch
    assert translate([_e("submission.status", status="RUNNING")], memory) == [
        Message(m.SUBMISSION_STATUS_CHANGED, {"submissionId": "s1", "status": "RUNNING"})]


def test_priority_of_a_submission_and_of_its_chains() -> None:
    assert translate([_e("submission.priority", priority=7)], Memory()) == [
        Message(m.SUBMISSION_PRIORITY_CHANGED, {"submissionId": "s1", "priority": 7}),
        Message(m.PROCESS_CHAIN_ALL_PRIORITY_CHANGED, {"submissionId": "s1", "priority": 7})]
    assert translate([_e("chain.priority", chain="c1", priority=-2)], Memory()) == [
        Message(m.PROCESS_CHAIN_PRIORITY_CHANGED, {"processChainId": "c1", "priority": -2})]


def test_cancelling_a_submission_cancels_its_waiting_chains() -> None:
    assert translate([_e("submission.cancelRequested", cancelled=3)], Memory()) == [
        Message(m.PROCESS_CHAIN_ALL_STATUS_CHANGED, {"submissionId": "s1",
                                                     "currentStatus": s, "newStatus": "CANCELLED"})
        for s in ("REGISTERED", "PAUSED")]


def test_chains_registered_together_are_one_message() -> None:
    chain = {"id": "c1", "executables": [{"id": "e"}], "requiredCapabilities": ["gpu"],
             "priority": 2}
    events = [_e("chain.registered", chain="c1", executables=1),
              _e("chain.registered", chain="c2", executables=1),
              _e("chain.registered", "s2", chain="c3", executables=1)]
    events[0]["chain"] = chain
    out = translate(events, Memory())
    assert out == [
        Message(m.PROCESS_CHAINS_ADDED, {"processChains": [
            {"id": "c1", "requiredCapabilities": ["gpu"], "priority": 2},
            {"id": "c2", "requiredCapabilities": []}], "submissionId": "s1",
            "status": "REGISTERED"}),
        Message(m.PROCESS_CHAINS_ADDED_SIZE, {"processChainsSize": 2, "submissionId": "s1",
                                              "status": "REGISTERED"}),
        Message(m.PROCESS_CHAINS_ADDED, {"processChains": [
            {"id": "c3", "requiredCapabilities": []}], "submissionId": "s2",
            "status": "REGISTERED"}),
        Message(m.PROCESS_CHAINS_ADDED_SIZE, {"processChainsSize": 1, "submissionId": "s2",
                                              "status": "REGISTERED"})]


def test_a_chain_s_run_from_start_to_pause() -> None:
    memory = Memory()
    started = translate([_e("chain.started", chain="c1", run=2, agent="a1")], memory)
    assert started == [
        Message(m.PROCESS_CHAIN_STATUS_CHANGED, {"processChainId": "c1", "submissionId": "s1",
                                                 "status": "RUNNING",
                                                 "previousStatus": "REGISTERED"}),
        Message(m.AGENT_BUSY, {"id": "a1", "available": False, "stateChangedTime": T0,
                               "processChainId": "c1"}),
        Message(m.PROCESS_CHAIN_RUN_ADDED, {"processChainId": "c1", "agentId": "a1",
                                            "runNumber": 2, "startTime": T0})]
    finished = translate([_e("chain.finished", chain="c1", time=T1, run=2, status="PAUSED",
                             errorMessage="later", resumeAt=T1)], memory)
    assert finished == [
        Message(m.PROCESS_CHAIN_RUN_FINISHED, {"processChainId": "c1", "runNumber": 2,
                                               "endTime": T1, "status": "PAUSED",
                                               "errorMessage": "later", "autoResumeAfter": T1}),
        Message(m.PROCESS_CHAIN_STATUS_CHANGED, {"processChainId": "c1", "submissionId": "s1",
                                                 "status": "PAUSED", "previousStatus": "RUNNING"}),
        Message(m.AGENT_IDLE, {"id": "a1", "available": True, "stateChangedTime": T1})]
    assert translate([_e("chain.resumed", chain="c1")], memory) == [
        Message(m.PROCESS_CHAIN_STATUS_CHANGED, {"processChainId": "c1", "submissionId": "s1",
                                                 "status": "REGISTERED",
                                                 "previousStatus": "PAUSED"})]


def test_an_agent_with_a_chain_claimed_ahead_stays_busy() -> None:
    """After a short chain an agent claims its next but one while the next runs: the end of
    the one before is no moment of idleness."""
    memory = Memory()
    translate([_e("chain.started", chain="c1", agent="a1"),
               _e("chain.started", chain="c2", agent="a1")], memory)
    first = translate([_e("chain.finished", chain="c1", status="SUCCESS")], memory)
    assert m.AGENT_IDLE not in [message.address for message in first]
    last = translate([_e("chain.finished", chain="c2", time=T1, status="SUCCESS")], memory)
    assert last[-1] == Message(m.AGENT_IDLE, {"id": "a1", "available": True,
                                              "stateChangedTime": T1})


def test_a_finished_run_s_agent_comes_from_the_database_if_its_start_was_not_seen() -> None:
    out = translate([_e("chain.finished", chain="c9", run=1, status="SUCCESS", agent="a2")],
                    Memory())
    assert out[-1] == Message(m.AGENT_IDLE, {"id": "a2", "available": True,
                                             "stateChangedTime": T0})
    assert "errorMessage" not in out[0].body and "autoResumeAfter" not in out[0].body


def test_chains_given_back_and_cancelled() -> None:
    memory = Memory(agents={"c1": "a1"})
    assert translate([_e("chain.requeued", chain="c1", run=1, reason="stopping",
                         chainStatus="REGISTERED")], memory) == [
        Message(m.PROCESS_CHAIN_STATUS_CHANGED, {"processChainId": "c1", "submissionId": "s1",
                                                 "status": "REGISTERED",
                                                 "previousStatus": "RUNNING"}),
        Message(m.AGENT_IDLE, {"id": "a1", "available": True, "stateChangedTime": T0})]
    assert translate([_e("chain.agentLost", chain="c2", run=1, agent="a9")], memory) == [
        Message(m.PROCESS_CHAIN_STATUS_CHANGED, {"processChainId": "c2", "submissionId": "s1",
                                                 "status": "REGISTERED",
                                                 "previousStatus": "RUNNING"})]
    # a waiting chain ends at once; a running one when its run ends (chain.finished)
    assert translate([_e("chain.cancelRequested", chain="c3", chainStatus="CANCELLED")],
                     memory) == [
        Message(m.PROCESS_CHAIN_STATUS_CHANGED, {"processChainId": "c3", "submissionId": "s1",
                                                 "status": "CANCELLED",
                                                 "previousStatus": "REGISTERED"})]
    assert translate([_e("chain.cancelRequested", chain="c4", chainStatus="RUNNING")],
                     memory) == []


def test_agents_arrive_and_leave_with_their_id_as_body() -> None:
    out = translate([_e("agent.arrived", None, agent="a1", host="h", capabilities=[]),
                     _e("agent.left", None, agent="a1", reason="stopped")], Memory())
    assert out == [Message(m.AGENT_ADDED, "a1"), Message(m.AGENT_LEFT, "a1")]


def test_events_steep_has_no_message_for() -> None:
    events = [_e("chain.waiting", reason="no agent", chains=2),
              _e("chain.attemptFailed", chain="c1"), _e("submission.resumed", owner="x")]
    assert translate(events, Memory()) == []


def test_a_log_line_carries_its_run_number_as_text() -> None:
    assert m.log_line("c1", 2, "hello") == Message("steep.logs.processchains.c1", "hello",
                                                   {"runNumber": "2"})


@pytest.mark.parametrize("address, allowed", [
    (m.SUBMISSION_ADDED, True), (m.AGENT_IDLE, True), (m.CLUSTER_NODE_LEFT, True),
    ("steep.vmRegistry.vmAdded", True), ("steep.logs.processchains.abc", True),
    ("steep.logs.processchains.", False), ("steep.controller.lookupNow", False),
    ("steep.remoteAgentRegistry.agent.a1", False), ("", False)])
def test_what_clients_may_register_to(address: str, allowed: bool) -> None:
    assert m.permitted(address) is allowed


def test_sockjs_frames() -> None:
    assert sockjs.array_frame(['{"a":"é"}', "x"]) == 'a["{\\"a\\":\\"é\\"}","x"]'
    assert sockjs.close_frame() == 'c[3000,"Go away!"]'
    assert sockjs.client_messages('["one","two"]') == ["one", "two"]
    assert sockjs.client_messages('"one"') == ["one"]
    assert sockjs.client_messages("") == []
    for broken in ("[", "[1]", "{}", "3"):
        with pytest.raises(sockjs.BrokenFrame):
            sockjs.client_messages(broken)


def test_bridge_messages() -> None:
    assert sockjs.parse_request('{"type":"ping"}') == sockjs.Request("ping")
    assert sockjs.parse_request('{"type":"register","address":"x","headers":{}}') == \
        sockjs.Request("register", "x")
    assert [sockjs.parse_request(t) for t in ("nope", "[]", "{}", '{"type":"register"}',
                                              '{"type":"x","address":"a"}')] == [
        "invalid_json", "invalid_json", "missing_type", "missing_address", "invalid_type"]
    assert json.loads(sockjs.rec("a", {"b": 1})) == {"type": "rec", "address": "a",
                                                     "body": {"b": 1}}
    assert json.loads(sockjs.rec("a", "line", {"runNumber": "1"}))["headers"] == {
        "runNumber": "1"}
    assert json.loads(sockjs.err("access_denied")) == {"type": "err", "body": "access_denied"}
    info = sockjs.info()
    assert info["websocket"] is True and info["cookie_needed"] is False


def test_a_chains_progress() -> None:
    assert translate([_e("chain.progress", chain="c1", progress=0.42)], Memory()) == [
        Message(m.PROCESS_CHAIN_PROGRESS_CHANGED, {"processChainId": "c1",
                                                   "estimatedProgress": 0.42})]
