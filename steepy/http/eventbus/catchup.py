"""Catching a client up when it registers to an address.

Steep's web UI loads a page's data over HTTP first and registers to the event bus after its
WebSocket has opened, a few hundred milliseconds later (seconds on a busy machine). What changes
in between is lost to the page for good: a workflow that ends meanwhile stays "Running" on the
list. So a session remembers the events of the last REPLAY_S seconds (also those before it
opened), and when a client registers to an address it sends the newest message of each thing
on that address first. Only messages that set a value are sent again (a status, a time, a
priority, an agent's busy or idle state): receiving one twice, or one the page's data already
had, changes nothing. Messages that count (`processChainStatusChanged` moves a chain from one
counter of the list to another) or add (`submissionAdded`) are never sent twice. A page may
apply the list it fetched only after the first catching up arrived: so a second later the
session says again what it caught the client up on and has not changed since (session.py).
Steep's bridge does neither; Steep's UI has the same gap with Steep.
"""

from __future__ import annotations

from collections import deque
from datetime import datetime
from typing import Callable

from steepy.http.eventbus import messages as m
from steepy.http.eventbus.messages import Memory, Message, translate

REPLAY_S = 15.0  # how far back a registering client is caught up
RECENT_MAX = 2000  # events remembered at most (a busy server: the newest of the window)

_by_submission: Callable[[dict], str] = lambda body: body["submissionId"]
# address -> (group: messages of one group set the same value, the thing it is about)
SETS: dict[str, tuple[str, Callable[[dict], str]]] = {
    m.SUBMISSION_START_TIME_CHANGED: ("startTime", _by_submission),
    m.SUBMISSION_END_TIME_CHANGED: ("endTime", _by_submission),
    m.SUBMISSION_STATUS_CHANGED: ("status", _by_submission),
    m.SUBMISSION_PRIORITY_CHANGED: ("priority", _by_submission),
    m.SUBMISSION_ERROR_MESSAGE_CHANGED: ("errorMessage", _by_submission),
    m.PROCESS_CHAIN_PROGRESS_CHANGED: ("progress", lambda body: body["processChainId"]),
    m.AGENT_BUSY: ("agent", lambda body: body["id"]),
    m.AGENT_IDLE: ("agent", lambda body: body["id"]),
}


def catch_up(said: list[Message], address: str) -> list[Message]:
    """Of the messages `said` (oldest first), those to send again to a client that registers
    to `address` now: the newest of each group and thing, if it is on that address."""
    if address not in SETS:
        return []
    newest: dict[tuple[str, str], Message] = {}
    for message in said:
        found = SETS.get(message.address)
        if found is not None:
            group, key = found
            newest.pop((group, key(message.body)), None)  # keeps the dict in order of arrival
            newest[(group, key(message.body))] = message
    return [message for message in newest.values() if message.address == address]


def _posix(event: dict) -> float | None:
    try:
        return datetime.fromisoformat(event["time"]).timestamp()
    except (KeyError, TypeError, ValueError):
        return None


class Recent:
    """The events of the last REPLAY_S seconds, oldest first (at most RECENT_MAX)."""

    def __init__(self, window_s: float = REPLAY_S, most: int = RECENT_MAX):
        self.window_s = window_s
        self.events: deque[tuple[float, dict]] = deque(maxlen=most)
        self._said: list[Message] | None = None  # their messages, until more events come

    def add(self, events: list[dict], now: float) -> None:
        """Events as they come (oldest first); `now` in POSIX seconds."""
        for event in events:
            stamp = _posix(event)
            if stamp is not None and stamp >= now - self.window_s:
                self.events.append((stamp, event))
                self._said = None
        self._forget(now)

    def replay(self, address: str, now: float) -> list[Message]:
        """What a client that registers to `address` now is sent first."""
        if address not in SETS:
            return []
        self._forget(now)
        if self._said is None:  # a page registers a dozen addresses at once: translated once
            self._said = translate([event for _, event in self.events], Memory())
        return catch_up(self._said, address)

    def _forget(self, now: float) -> None:
        while self.events and self.events[0][0] < now - self.window_s:
            self.events.popleft()
            self._said = None
