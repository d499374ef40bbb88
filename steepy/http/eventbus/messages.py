"""Steep's event bus messages from steepy's timeline: which address, which body.

Steep publishes on its Vert.x event bus whenever its registries change (NotifyingSubmissionRegistry,
RemoteAgentRegistry, its agents' busy/idle markers, EventbusAppender for live log lines), and its
web UI listens to those addresses. steepy writes the same changes as timeline events
(steepy/engine/feed.py); `translate` turns a batch of them into Steep's messages. Pure: what needs the
database (a submission's body for `submissionAdded`, chain bodies for `processChainsAdded`, the
agent of a finished run, a chain's status after a cancel) is put into the event beforehand under
the keys `submission`, `chain`, `agent` and `chainStatus` (steepy/http/eventbus/lookups.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

from steepy.events import EventKind as K

_SR = "steep.submissionRegistry."
SUBMISSION_ADDED = _SR + "submissionAdded"
SUBMISSION_START_TIME_CHANGED = _SR + "submissionStartTimeChanged"
SUBMISSION_END_TIME_CHANGED = _SR + "submissionEndTimeChanged"
SUBMISSION_STATUS_CHANGED = _SR + "submissionStatusChanged"
SUBMISSION_PRIORITY_CHANGED = _SR + "submissionPriorityChanged"
SUBMISSION_ERROR_MESSAGE_CHANGED = _SR + "submissionErrorMessageChanged"
SUBMISSIONS_DELETED = _SR + "submissionsDeleted"
PROCESS_CHAINS_ADDED = _SR + "processChainsAdded"
PROCESS_CHAINS_ADDED_SIZE = _SR + "processChainsAddedSize"
PROCESS_CHAIN_RUN_ADDED = _SR + "processChainRunAdded"
PROCESS_CHAIN_RUN_FINISHED = _SR + "processChainRunFinished"
PROCESS_CHAIN_LAST_RUN_DELETED = _SR + "processChainLastRunDeleted"
PROCESS_CHAIN_ALL_RUNS_DELETED = _SR + "processChainAllRunsDeleted"
PROCESS_CHAIN_STATUS_CHANGED = _SR + "processChainStatusChanged"
PROCESS_CHAIN_ALL_STATUS_CHANGED = _SR + "processChainAllStatusChanged"
PROCESS_CHAIN_PRIORITY_CHANGED = _SR + "processChainPriorityChanged"
PROCESS_CHAIN_ALL_PRIORITY_CHANGED = _SR + "processChainAllPriorityChanged"
PROCESS_CHAIN_PROGRESS_CHANGED = _SR + "processChainProgressChanged"
_RA = "steep.remoteAgentRegistry."
AGENT_ADDED = _RA + "agentAdded"
AGENT_LEFT = _RA + "agentLeft"
AGENT_BUSY = _RA + "agentBusy"
AGENT_IDLE = _RA + "agentIdle"
CLUSTER_NODE_LEFT = "steep.cluster.nodeLeft"
LOGS_PROCESSCHAINS_PREFIX = "steep.logs.processchains."
_VM = "steep.vmRegistry."

# what Steep lets its bridge's clients listen to (outbound permitted); nothing is inbound
OUTBOUND = frozenset({
    SUBMISSION_ADDED, SUBMISSION_START_TIME_CHANGED, SUBMISSION_END_TIME_CHANGED,
    SUBMISSION_STATUS_CHANGED, SUBMISSION_PRIORITY_CHANGED, SUBMISSION_ERROR_MESSAGE_CHANGED,
    SUBMISSIONS_DELETED, PROCESS_CHAINS_ADDED, PROCESS_CHAINS_ADDED_SIZE, PROCESS_CHAIN_RUN_ADDED,
    PROCESS_CHAIN_RUN_FINISHED, PROCESS_CHAIN_LAST_RUN_DELETED, PROCESS_CHAIN_ALL_RUNS_DELETED,
    PROCESS_CHAIN_STATUS_CHANGED, PROCESS_CHAIN_ALL_STATUS_CHANGED, PROCESS_CHAIN_PRIORITY_CHANGED,
    PROCESS_CHAIN_ALL_PRIORITY_CHANGED, PROCESS_CHAIN_PROGRESS_CHANGED, CLUSTER_NODE_LEFT,
    AGENT_ADDED, AGENT_LEFT, AGENT_BUSY, AGENT_IDLE,
    *(_VM + n for n in ("vmAdded", "vmCreationTimeChanged", "vmAgentJoinTimeChanged",
                        "vmDestructionTimeChanged", "vmStatusChanged", "vmExternalIdChanged",
                        "vmIpAddressChanged", "vmReasonChanged", "vmsDeleted")),
})


def permitted(address: str) -> bool:
    """Whether a client may register to `address` (Steep's outbound permissions)."""
    return address in OUTBOUND or (address.startswith(LOGS_PROCESSCHAINS_PREFIX)
                                   and len(address) > len(LOGS_PROCESSCHAINS_PREFIX))


@dataclass(frozen=True)
class Message:
    address: str
    body: Any
    headers: dict[str, str] | None = None


@dataclass
class Memory:
    """What translating needs to remember between batches of one consumer."""

    retried: set[str] = field(default_factory=set)  # submissions retried, RUNNING not yet seen
    agents: dict[str, str] = field(default_factory=dict)  # running chain -> its agent


# the events whose messages need something from the database, and the addresses that need it
LOOKUPS: dict[str, frozenset[str]] = {
    K.SUBMISSION_STATUS: frozenset({SUBMISSION_ADDED}),
    K.CHAIN_REGISTERED: frozenset({PROCESS_CHAINS_ADDED}),
    K.CHAIN_FINISHED: frozenset({AGENT_IDLE}),
    K.CHAIN_CANCEL_REQUESTED: frozenset({PROCESS_CHAIN_STATUS_CHANGED}),
    K.CHAIN_REQUEUED: frozenset({PROCESS_CHAIN_STATUS_CHANGED}),
}


def log_line(chain_id: str, run_number: int, line: str) -> Message:
    """A live log line of a chain's run (Steep's EventbusAppender: the header is text)."""
    return Message(LOGS_PROCESSCHAINS_PREFIX + chain_id, line, {"runNumber": str(run_number)})


def translate(events: list[dict], memory: Memory) -> list[Message]:
    """Steep's messages for timeline events (oldest first), in the order Steep sends them.
    Chains registered together (consecutive events of one submission) are one message."""
    out: list[Message] = []
    for (registered, _), group in groupby(events, key=_registered_together):
        if registered:
            out += _chains_registered(list(group))
        else:
            for event in group:
                out += _one(event, memory)
    return out


def _registered_together(event: dict) -> tuple[bool, str | None]:
    return event["kind"] == K.CHAIN_REGISTERED, event.get("submissionId")


def _one(event: dict, memory: Memory) -> list[Message]:
    kind = event["kind"]
    handler = _HANDLERS.get(kind)
    return [] if handler is None else handler(event, memory)


def _submission_status(e: dict, memory: Memory) -> list[Message]:
    sid, status, time = e["submissionId"], e["status"], e["time"]
    if status == "ACCEPTED":
        return [Message(SUBMISSION_ADDED, submission_added_body(e.get("submission"), sid))]
    out = [Message(SUBMISSION_STATUS_CHANGED, {"submissionId": sid, "status": status})]
    if status == "RUNNING":
        if sid in memory.retried:  # a retried submission keeps its start time
            memory.retried.discard(sid)
        else:
            out.append(Message(SUBMISSION_START_TIME_CHANGED,
                               {"submissionId": sid, "startTime": time}))
        return out
    out.insert(0, Message(SUBMISSION_END_TIME_CHANGED, {"submissionId": sid, "endTime": time}))
    if e.get("errorMessage") is not None:
        out.append(Message(SUBMISSION_ERROR_MESSAGE_CHANGED,
                           {"submissionId": sid, "errorMessage": e["errorMessage"]}))
    return out


def submission_added_body(submission: dict | None, submission_id: str) -> dict:
    """Steep's body of `submissionAdded`: the submission as accepted, without its workflow."""
    body = {k: v for k, v in (submission or {"id": submission_id}).items()
            if k not in ("workflow", "startTime", "endTime", "errorMessage", "results")}
    body.setdefault("priority", 0)
    body.setdefault("requiredCapabilities", [])
    body["status"] = "ACCEPTED"
    return body


def _submission_retried(e: dict, memory: Memory) -> list[Message]:
    sid = e["submissionId"]
    memory.retried.add(sid)
    return [Message(SUBMISSION_END_TIME_CHANGED, {"submissionId": sid, "endTime": None}),
            Message(SUBMISSION_ERROR_MESSAGE_CHANGED, {"submissionId": sid, "errorMessage": None})]


def _submission_priority(e: dict, memory: Memory) -> list[Message]:
    body = {"submissionId": e["submissionId"], "priority": e["priority"]}
    return [Message(SUBMISSION_PRIORITY_CHANGED, body),
            Message(PROCESS_CHAIN_ALL_PRIORITY_CHANGED, dict(body))]


def _submission_cancel(e: dict, memory: Memory) -> list[Message]:
    sid = e["submissionId"]
    return [Message(PROCESS_CHAIN_ALL_STATUS_CHANGED,
                    {"submissionId": sid, "currentStatus": current, "newStatus": "CANCELLED"})
            for current in ("REGISTERED", "PAUSED")]


def _chains_registered(events: list[dict]) -> list[Message]:
    sid = events[0]["submissionId"]
    chains = [{k: v for k, v in (e.get("chain") or {"id": e["chainId"],
                                                    "requiredCapabilities": []}).items()
               if k != "executables"} for e in events]
    return [Message(PROCESS_CHAINS_ADDED, {"processChains": chains, "submissionId": sid,
                                           "status": "REGISTERED"}),
            Message(PROCESS_CHAINS_ADDED_SIZE, {"processChainsSize": len(chains),
                                                "submissionId": sid, "status": "REGISTERED"})]


def _chain_status(e: dict, status: str, previous: str) -> Message:
    return Message(PROCESS_CHAIN_STATUS_CHANGED, {
        "processChainId": e["chainId"], "submissionId": e["submissionId"], "status": status,
        "previousStatus": previous})


def _chain_started(e: dict, memory: Memory) -> list[Message]:
    cid, agent, time = e["chainId"], e.get("agent"), e["time"]
    out = [_chain_status(e, "RUNNING", "REGISTERED")]
    if agent is not None:
        memory.agents[cid] = agent
        out.append(Message(AGENT_BUSY, {"id": agent, "available": False,
                                        "stateChangedTime": time, "processChainId": cid}))
    out.append(Message(PROCESS_CHAIN_RUN_ADDED, {
        "processChainId": cid, "agentId": agent, "runNumber": e.get("run", 1),
        "startTime": time}))
    return out


def _chain_finished(e: dict, memory: Memory) -> list[Message]:
    cid, time, status = e["chainId"], e["time"], e["status"]
    run = {"processChainId": cid, "runNumber": e.get("run", 1), "endTime": time,
           "status": status}
    if e.get("errorMessage") is not None:
        run["errorMessage"] = e["errorMessage"]
    if e.get("resumeAt") is not None:
        run["autoResumeAfter"] = e["resumeAt"]
    out = [Message(PROCESS_CHAIN_RUN_FINISHED, run), _chain_status(e, status, "RUNNING")]
    agent = memory.agents.pop(cid, None) or e.get("agent")
    if _idle(agent, memory):
        out.append(Message(AGENT_IDLE, {"id": agent, "available": True,
                                        "stateChangedTime": time}))
    return out


def _idle(agent: str | None, memory: Memory) -> bool:
    """The agent has no other chain: one claimed ahead (the scheduler's claim-ahead) starts
    as soon as this one ends, and its start was said already."""
    return agent is not None and agent not in memory.agents.values()


def _chain_back(e: dict, memory: Memory) -> list[Message]:
    """A running chain given back (its engine stopped, its agent was lost)."""
    agent = memory.agents.pop(e["chainId"], None)
    status = e.get("chainStatus") or "REGISTERED"
    if status not in ("REGISTERED", "CANCELLED"):
        status = "REGISTERED"  # it has moved on since: its next event says where
    out = [_chain_status(e, status, "RUNNING")]
    if _idle(agent, memory) and e["kind"] == K.CHAIN_REQUEUED:
        out.append(Message(AGENT_IDLE, {"id": agent, "available": True,
                                        "stateChangedTime": e["time"]}))
    return out


def _chain_resumed(e: dict, memory: Memory) -> list[Message]:
    return [_chain_status(e, "REGISTERED", "PAUSED")]


def _chain_reused(e: dict, memory: Memory) -> list[Message]:
    """A reused chain (extensions 15) ends SUCCESS without running."""
    return [_chain_status(e, "SUCCESS", "REGISTERED")]


def _chain_cancel(e: dict, memory: Memory) -> list[Message]:
    """A waiting chain is cancelled at once; a running one later, when its run ends."""
    if e["chainId"] in memory.agents or e.get("chainStatus") != "CANCELLED":
        return []
    return [_chain_status(e, "CANCELLED", e.get("previous") or "REGISTERED")]


def _chain_priority(e: dict, memory: Memory) -> list[Message]:
    return [Message(PROCESS_CHAIN_PRIORITY_CHANGED,
                    {"processChainId": e["chainId"], "priority": e["priority"]})]


def _chain_progress(e: dict, memory: Memory) -> list[Message]:
    return [Message(PROCESS_CHAIN_PROGRESS_CHANGED,
                    {"processChainId": e["chainId"], "estimatedProgress": e["progress"]})]


def _agent_arrived(e: dict, memory: Memory) -> list[Message]:
    return [Message(AGENT_ADDED, e["agent"])]


def _agent_left(e: dict, memory: Memory) -> list[Message]:
    return [Message(AGENT_LEFT, e["agent"])]


_HANDLERS = {  # the other kinds have no message in Steep
    K.SUBMISSION_STATUS: _submission_status,
    K.SUBMISSION_RETRIED: _submission_retried,
    K.SUBMISSION_PRIORITY: _submission_priority,
    K.SUBMISSION_CANCEL_REQUESTED: _submission_cancel,
    K.CHAIN_STARTED: _chain_started,
    K.CHAIN_FINISHED: _chain_finished,
    K.CHAIN_REQUEUED: _chain_back,
    K.CHAIN_AGENT_LOST: _chain_back,
    K.CHAIN_RESUMED: _chain_resumed,
    K.CHAIN_REUSED: _chain_reused,
    K.CHAIN_CANCEL_REQUESTED: _chain_cancel,
    K.CHAIN_PRIORITY: _chain_priority,
    K.CHAIN_PROGRESS: _chain_progress,
    K.AGENT_ARRIVED: _agent_arrived,
    K.AGENT_LEFT: _agent_left,
}
