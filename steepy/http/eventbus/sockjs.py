"""SockJS's WebSocket framing and Vert.x's event bus bridge protocol, as text in and out.

SockJS (what `sockjs-client` speaks, under `@vertx/eventbus-bridge-client.js`): the server
opens with `o`, sends `h` as a heartbeat, messages as `a[...]` (a JSON array of strings) and
closes with `c[code,"reason"]`; the client sends a JSON array of strings (or one string).
`GET <prefix>/info` tells the client which transports there are. The raw WebSocket
(`<prefix>/websocket`) carries the same messages without any of that framing.

Vert.x's bridge, inside those strings: the client sends JSON objects with `type` register,
unregister, ping, send or publish (and `address`); the server sends
`{"type":"rec","address":...,"body":...,"headers"?}` and, for what it refuses,
`{"type":"err","body":<reason>}` with Vert.x's reasons.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from typing import Any

from steepy.errors import SteepyError

OPEN = "o"
HEARTBEAT = "h"
HEARTBEAT_S = 25.0  # SockJS's default heartbeat period
GO_AWAY = (3000, "Go away!")  # what SockJS says when the server ends a session

# Vert.x's bridge limits and reasons
MAX_ADDRESS_LENGTH = 200
MAX_HANDLERS = 1000
PING_TIMEOUT_S = 10.0  # a session that sends no ping for this long is closed
INVALID_JSON = "invalid_json"
MISSING_TYPE = "missing_type"
MISSING_ADDRESS = "missing_address"
INVALID_TYPE = "invalid_type"
ACCESS_DENIED = "access_denied"
ADDRESS_TOO_LONG = "max_address_length_reached"
TOO_MANY_HANDLERS = "max_handlers_reached"


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def info() -> dict:
    """The body of `GET <prefix>/info`: WebSocket available, no sticky-session cookie."""
    return {"websocket": True, "cookie_needed": False, "origins": ["*:*"],
            "entropy": secrets.randbits(31)}


def array_frame(messages: list[str]) -> str:
    """Messages to a SockJS client: `a["...","..."]`."""
    return "a" + _dumps(messages)


def close_frame(code: int = GO_AWAY[0], reason: str = GO_AWAY[1]) -> str:
    return "c" + _dumps([code, reason])


class BrokenFrame(SteepyError, ValueError):
    """What a SockJS client sent is not JSON (a SockJS server closes the session)."""


def client_messages(frame: str) -> list[str]:
    """The messages in a frame from a SockJS client (an empty frame has none)."""
    if not frame.strip():
        return []
    try:
        value = json.loads(frame)
    except ValueError as e:
        raise BrokenFrame(str(e)) from None
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    raise BrokenFrame("not a string or an array of strings")


@dataclass(frozen=True)
class Request:
    """One bridge message from a client: register, unregister, ping, send or publish."""

    type: str
    address: str | None = None


def parse_request(text: str) -> Request | str:
    """The client's bridge message, or the reason Vert.x gives for refusing it."""
    try:
        message = json.loads(text)
    except ValueError:
        return INVALID_JSON
    if not isinstance(message, dict):
        return INVALID_JSON
    kind = message.get("type")
    if not isinstance(kind, str):
        return MISSING_TYPE
    if kind == "ping":
        return Request("ping")
    address = message.get("address")
    if not isinstance(address, str):
        return MISSING_ADDRESS
    if kind not in ("register", "unregister", "send", "publish"):
        return INVALID_TYPE
    return Request(kind, address)


def rec(address: str, body: Any, headers: dict[str, str] | None = None) -> str:
    """A message delivered to a registered address."""
    envelope: dict[str, Any] = {"type": "rec", "address": address, "body": body}
    if headers:
        envelope["headers"] = headers
    return _dumps(envelope)


def err(reason: str) -> str:
    return _dumps({"type": "err", "body": reason})
