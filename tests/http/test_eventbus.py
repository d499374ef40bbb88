"""Steep's event bus against a real `steepy serve`: a WebSocket client speaking the frames of
`@vertx/eventbus-bridge-client.js` over `sockjs-client` registers to Steep's addresses and
receives Steep's messages while a workflow runs; unregistering stops them; pings keep a session
open, and a session without them is closed as Vert.x closes it; bad frames get Vert.x's `err`."""

from __future__ import annotations

import json
import random
import string
import time
from contextlib import ExitStack
from datetime import datetime
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from steepy.http.eventbus import sockjs
from tests.conftest import ROOT
from tests.http.conftest import Server

pytestmark = [pytest.mark.process]

FAN_OUT = (ROOT / "workflows" / "fan-out.yaml").read_text()  # 6 chains: split, 4 sorts, cat
SR = "steep.submissionRegistry."
AGENT_BUSY, AGENT_IDLE = "steep.remoteAgentRegistry.agentBusy", "steep.remoteAgentRegistry.agentIdle"


class EventBus:
    def __init__(self, url: str, framed: bool = True, headers: dict | None = None):
        self.framed = framed
        base = url.replace("http://", "ws://", 1) + "/eventbus"
        if framed:  # sockjs-client: <base>/<server 0-999>/<session: 8 random chars>/websocket
            session = "".join(random.choices(string.ascii_lowercase + string.digits, k=8))
            base += f"/{random.randrange(1000)}/{session}"
        self._stack = ExitStack()
        self.ws: ClientConnection = self._stack.enter_context(
            connect(base + "/websocket", additional_headers=headers, open_timeout=30))
        self.received: list[dict] = []  # bridge messages, oldest first
        self.frames: list[str] = []  # every frame as it came (SockJS only)
        self.closed_with: list | None = None  # SockJS close frame's [code, reason]
        if framed:
            assert self.ws.recv(timeout=30) == "o"

    def send(self, *messages: dict | str) -> None:
        texts = [m if isinstance(m, str) else json.dumps(m) for m in messages]
        if self.framed:
            self.ws.send(json.dumps(texts))  # sockjs-client: a JSON array of strings
        else:
            for text in texts:
                self.ws.send(text)

    def register(self, *addresses: str) -> None:
        self.send(*({"type": "register", "address": a, "headers": {}} for a in addresses))

    def unregister(self, *addresses: str) -> None:
        self.send(*({"type": "unregister", "address": a, "headers": {}} for a in addresses))

    def ping(self) -> None:
        self.send({"type": "ping"})

    def receive(self, timeout: float) -> bool:
        """Read one frame; False if none came within `timeout` seconds or the socket closed."""
        try:
            frame = self.ws.recv(timeout=timeout)
        except (TimeoutError, ConnectionClosed):
            return False
        if not self.framed:
            self.received.append(json.loads(frame))
            return True
        self.frames.append(frame)
        if frame.startswith("a"):
            self.received.extend(json.loads(m) for m in json.loads(frame[1:]))
        elif frame.startswith("c"):
            self.closed_with = json.loads(frame[1:])
        return True

    def until(self, predicate, timeout_s: float = 60, ping_every_s: float = 2.0) -> list[dict]:
        """Receive (pinging as the client library does) until a message matches."""
        end = time.monotonic() + timeout_s
        pinged = time.monotonic()
        while not any(predicate(m) for m in self.received):
            assert time.monotonic() < end, f"no such message; last: {self.received[-5:]}"
            if time.monotonic() - pinged >= ping_every_s:
                self.ping()
                pinged = time.monotonic()
            self.receive(0.2)
        return self.received

    def quiet_for(self, seconds: float) -> list[dict]:
        """What arrives within `seconds` (pinging meanwhile)."""
        before = len(self.received)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.ping()
            self.receive(min(1.0, max(0.01, end - time.monotonic())))
        return self.received[before:]

    def caught_up(self, seconds: float = 0.3) -> list[dict]:
        """After registering: what the server said of the time before (catchup.py), which is
        then forgotten, so that what follows is only what happens from now on."""
        said = self.quiet_for(seconds)
        self.received.clear()
        self.frames.clear()
        return said

    def is_open(self) -> bool:
        try:
            self.ws.ping().wait(5)
            return True
        except (ConnectionClosed, TimeoutError):
            return False

    def close(self) -> None:
        self._stack.close()

    def bodies(self, address: str) -> list:
        return [m["body"] for m in self.received if m.get("address") == address]


def _status(sid: str, status: str):
    return lambda m: (m.get("address") == SR + "submissionStatusChanged"
                      and m["body"] == {"submissionId": sid, "status": status})


def _of_this_run(message: dict, sid: str, began: float) -> bool:
    """Not said again of an earlier test's submission or agents (caught up once more, a second
    after registering): of `sid`, or an agent's state since `began`."""
    body = message["body"]
    if "stateChangedTime" in body:
        return datetime.fromisoformat(body["stateChangedTime"]).timestamp() >= began
    return body.get("submissionId", sid) == sid


def test_info_says_websocket(server: Server) -> None:
    response = server.http.get("/eventbus/info")
    assert response.status_code == 200
    info = response.json()
    assert info["websocket"] is True and info["cookie_needed"] is False
    assert isinstance(info["entropy"], int)
    assert "no-store" in response.headers["cache-control"]
    assert server.http.get("/eventbus").text == "Welcome to SockJS!\n"


def test_a_submission_s_messages_have_steep_s_bodies(server: Server) -> None:
    bus = EventBus(server.url)
    try:
        names = ["submissionAdded", "submissionStatusChanged", "submissionStartTimeChanged",
                 "submissionEndTimeChanged", "submissionErrorMessageChanged",
                 "processChainsAdded", "processChainsAddedSize", "processChainStatusChanged",
                 "processChainRunAdded", "processChainRunFinished"]
        bus.register(*(SR + n for n in names), AGENT_BUSY, AGENT_IDLE)
        bus.caught_up()  # registered before anything happens
        began = time.time()
        sid = server.submit(FAN_OUT)
        bus.until(_status(sid, "SUCCESS"))
    finally:
        bus.close()
    assert all(m["type"] == "rec" for m in bus.received), bus.received
    bus.received = [m for m in bus.received if _of_this_run(m, sid, began)]  # no catching up
    document = server.http.get(f"/workflows/{sid}").json()

    added = bus.bodies(SR + "submissionAdded")
    assert added == [{"id": sid, "name": document["name"], "priority": 0, "status": "ACCEPTED",
                      "requiredCapabilities": [], "source": FAN_OUT}]
    assert bus.bodies(SR + "submissionStatusChanged") == [
        {"submissionId": sid, "status": "RUNNING"}, {"submissionId": sid, "status": "SUCCESS"}]
    [started] = bus.bodies(SR + "submissionStartTimeChanged")
    [ended] = bus.bodies(SR + "submissionEndTimeChanged")
    assert started["submissionId"] == ended["submissionId"] == sid
    assert started["startTime"].endswith("Z") and started["startTime"] < ended["endTime"]
    assert bus.bodies(SR + "submissionErrorMessageChanged") == []

    chains = [c for body in bus.bodies(SR + "processChainsAdded") for c in body["processChains"]]
    ids = {c["id"] for c in chains}
    assert len(chains) == len(ids) == document["totalProcessChains"] == 6
    assert all("executables" not in c and c["requiredCapabilities"] == [] for c in chains)
    assert all(b["submissionId"] == sid and b["status"] == "REGISTERED"
               for b in bus.bodies(SR + "processChainsAdded"))
    sizes = bus.bodies(SR + "processChainsAddedSize")
    assert sum(b["processChainsSize"] for b in sizes) == 6
    assert all(set(b) == {"processChainsSize", "submissionId", "status"} for b in sizes)

    changes = bus.bodies(SR + "processChainStatusChanged")
    for chain_id in ids:
        mine = [(b["previousStatus"], b["status"]) for b in changes
                if b["processChainId"] == chain_id and b["submissionId"] == sid]
        assert mine == [("REGISTERED", "RUNNING"), ("RUNNING", "SUCCESS")]
    runs = {b["processChainId"]: b for b in bus.bodies(SR + "processChainRunAdded")}
    assert set(runs) == ids
    assert all(set(b) == {"processChainId", "agentId", "runNumber", "startTime"}
               and b["runNumber"] == 1 and b["agentId"] for b in runs.values())
    finished = {b["processChainId"]: b for b in bus.bodies(SR + "processChainRunFinished")}
    assert set(finished) == ids
    assert all(set(b) == {"processChainId", "runNumber", "endTime", "status"}
               and b["status"] == "SUCCESS" and b["endTime"] >= runs[c]["startTime"]
               for c, b in finished.items())

    busy = bus.bodies(AGENT_BUSY)
    assert {b["processChainId"] for b in busy} == ids
    assert all(b["available"] is False and b["id"] == runs[b["processChainId"]]["agentId"]
               for b in busy)
    idle = bus.bodies(AGENT_IDLE)
    assert all(set(b) == {"id", "available", "stateChangedTime"} and b["available"] is True
               for b in idle)
    # an agent is idle after each chain unless it claimed its next one ahead (a chain shorter
    # than 0.5 s): at most one idle per chain, and every agent ends idle
    assert len({b["id"] for b in busy}) <= len(idle) <= 6
    states = [(m["address"], m["body"]["id"]) for m in bus.received
              if m.get("address") in (AGENT_BUSY, AGENT_IDLE)]
    for agent in {b["id"] for b in busy}:
        assert [a for a, who in states if who == agent][-1] == AGENT_IDLE


def test_every_message_comes_in_a_sockjs_frame_of_its_own(server: Server) -> None:
    """As Vert.x sends them. sockjs-client hands the messages of one frame to the page in one
    task, and Steep's UI adds a new submission to an open list in a promise callback (after that
    task): a `processChainsAddedSize` in the frame of `submissionAdded` reached the list before
    the submission and was lost (the list said "Success, 5 completed" of 6 chains)."""
    bus = EventBus(server.url)
    try:
        bus.register(*(SR + n for n in ["submissionAdded", "submissionStatusChanged",
                                        "processChainsAddedSize", "processChainStatusChanged"]))
        bus.caught_up()
        sid = server.submit(FAN_OUT)
        bus.until(_status(sid, "SUCCESS"))
    finally:
        bus.close()
    arrays = [json.loads(f[1:]) for f in bus.frames if f.startswith("a")]
    assert len(arrays) == len(bus.received) >= 1 + 2 + 3 + 12
    assert all(len(messages) == 1 for messages in arrays), arrays


def test_unregister_stops_messages_and_a_ping_keeps_the_session(server: Server) -> None:
    bus = EventBus(server.url)
    try:
        bus.register(SR + "submissionStatusChanged", SR + "processChainStatusChanged")
        bus.unregister(SR + "processChainStatusChanged")
        bus.ping()
        bus.quiet_for(0.3)
        sid = server.submit(FAN_OUT)
        bus.until(_status(sid, "SUCCESS"))
        addresses = {m["address"] for m in bus.received}
        assert addresses == {SR + "submissionStatusChanged"}, bus.received
        assert bus.frames and all(f[0] in "ah" for f in bus.frames)  # no err for the ping

        bus.unregister(SR + "submissionStatusChanged")
        bus.quiet_for(0.3)
        other = server.submit(FAN_OUT)
        assert server.wait(other)["status"] == "SUCCESS"
        assert bus.quiet_for(1.0) == []
        assert bus.is_open()
    finally:
        bus.close()


ONE_CHAIN = """api: 4.7.0
actions:
  - type: execute
    service: sleep
    inputs: [{id: seconds, value: 0}]
"""


def test_a_client_that_registers_late_is_told_the_newest_status(server: Server) -> None:
    """Steep's UI fetches a list, then opens its WebSocket and registers: a workflow that ended
    in between stayed "Running" on the list. A client is now told, when it registers, the
    newest status and times of what changed in the last seconds, but nothing that counts."""
    sid = server.submit(ONE_CHAIN)
    document = server.wait(sid)
    bus = EventBus(server.url)
    try:
        bus.register(*(SR + n for n in ("submissionStatusChanged", "submissionEndTimeChanged",
                                         "processChainStatusChanged", "submissionAdded")))
        both = bus.caught_up(1.3)  # at once, and once more a second after registering
    finally:
        bus.close()
    said, again = both[:len(both) // 2], both[len(both) // 2:]
    mine = [(m["address"], m["body"]) for m in said if m["body"].get("submissionId") == sid]
    assert [(address, sorted(body)) for address, body in mine] == [  # in the order registered
        (SR + "submissionStatusChanged", ["status", "submissionId"]),
        (SR + "submissionEndTimeChanged", ["endTime", "submissionId"])], said
    assert mine[0][1]["status"] == "SUCCESS"
    assert [(m["address"], m["body"]) for m in again] == [(m["address"], m["body"]) for m in said]
    said_end, stored_end = (datetime.fromisoformat(t).timestamp()
                            for t in (mine[1][1]["endTime"], document["endTime"]))
    assert abs(said_end - stored_end) < 0.1  # the event's stamp, in the same transaction
    assert {m["address"] for m in said} <= {SR + "submissionStatusChanged",
                                             SR + "submissionEndTimeChanged"}


@pytest.mark.parametrize("framed", [True, False], ids=["sockjs", "raw"])
def test_bad_frames_get_vertx_s_err(server: Server, framed: bool) -> None:
    bus = EventBus(server.url, framed=framed)
    try:
        bus.send("not json", {"address": SR + "submissionAdded"}, {"type": "register"},
                 {"type": "bogus", "address": "a"}, {"type": "register", "address": "not.steep"},
                 {"type": "register", "address": "steep.logs.processchains." + "x" * 200},
                 {"type": "publish", "address": SR + "submissionAdded", "body": {}},
                 {"type": "unregister", "address": "steep.controller.lookupNow"}, "[1]")
        bus.until(lambda m: len(bus.received) >= 9, timeout_s=10)
        assert bus.received == [{"type": "err", "body": b} for b in (
            "invalid_json", "missing_type", "missing_address", "invalid_type", "access_denied",
            "max_address_length_reached", "access_denied", "access_denied", "invalid_json")]
        assert bus.is_open()
    finally:
        bus.close()


def test_a_broken_sockjs_frame_ends_the_session(server: Server) -> None:
    bus = EventBus(server.url)
    try:
        bus.ws.send("[not json")
        end = time.monotonic() + 10
        while bus.is_open():
            assert time.monotonic() < end, "the session stayed open"
            bus.receive(0.2)
    finally:
        bus.close()


def test_a_session_without_pings_is_closed(server: Server) -> None:
    pinging, silent = EventBus(server.url), EventBus(server.url)
    try:
        end = time.monotonic() + sockjs.PING_TIMEOUT_S + 3
        while time.monotonic() < end:
            pinging.ping()
            pinging.receive(0.5)
            silent.receive(0.5)
        assert silent.closed_with == [3000, "Go away!"]
        assert not silent.is_open()
        assert pinging.closed_with is None and pinging.is_open()
    finally:
        pinging.close()
        silent.close()


def test_with_a_token_the_websocket_needs_it(tmp_path: Path) -> None:
    server = Server(tmp_path, "--no-agents", token="s3cret")
    try:
        assert server.http.get("/eventbus/info").status_code == 200  # carries the token
        with pytest.raises(InvalidStatus) as refused:
            EventBus(server.url)
        assert refused.value.response.status_code == 403
        bus = EventBus(server.url, headers={"Authorization": "Bearer s3cret"})
        bus.send("nope")
        assert bus.until(lambda m: m["type"] == "err", timeout_s=10)
        bus.close()
    finally:
        assert server.stop() == 0


SLOW = """api: 4.7.0
vars:
  - id: out
actions:
  - type: execute
    service: slowprint
    inputs:
      - id: lines
        value: 8
      - id: interval
        value: 0.4
    outputs:
      - id: output_file
        var: out
"""


def test_a_running_chain_s_log_lines_arrive_live(server: Server) -> None:
    bus = EventBus(server.url)
    try:
        bus.register(SR + "processChainsAdded", SR + "processChainRunFinished")
        bus.quiet_for(0.3)
        sid = server.submit(SLOW)
        is_added = lambda m: m.get("address") == SR + "processChainsAdded"  # noqa: E731
        added = next(m for m in bus.until(is_added) if is_added(m))
        assert added["body"]["submissionId"] == sid
        chain_id = added["body"]["processChains"][0]["id"]
        address = "steep.logs.processchains." + chain_id
        bus.register(address)
        bus.until(lambda m: m.get("address") == SR + "processChainRunFinished")
        bus.quiet_for(0.5)  # the last lines, read after the run ended
    finally:
        bus.close()
    lines = [m for m in bus.received if m.get("address") == address]
    assert len(lines) >= 3, bus.received  # 8 lines over about 3 s: most arrive live
    assert all(m["headers"] == {"runNumber": "1"} and m["body"].endswith("\n") for m in lines)
    whole = server.http.get(f"/logs/processchains/{chain_id}").text
    assert whole.endswith("".join(m["body"] for m in lines))  # the log's end, in order
