"""One client of the event bus bridge: what it registers to, and the messages it receives.

Each session follows the live feed (steepy/engine/feed.py) from the moment it opens, translates the
events into Steep's messages (messages.py) and sends those whose address the client has
registered to. It closes when the client goes, when the client sends no ping for
`PING_TIMEOUT_S` (as Vert.x's bridge does), when the client sends a broken SockJS frame, or
when the server stops.
"""

from __future__ import annotations

import asyncio
import logging
import time

from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from steepy.engine.feed import Subscription
from steepy.events import EventKind
from steepy.http.context import ApiContext
from steepy.http.eventbus import sockjs
from steepy.http.eventbus.logtail import LogTail
from steepy.http.eventbus.lookups import enrich
from steepy.http.eventbus.messages import LOGS_PROCESSCHAINS_PREFIX, Memory, permitted, translate
from steepy.registry.offload import call
from steepy.registry.outage import database_failure_said

log = logging.getLogger(__name__)

WAKE_S = 0.5  # how often a quiet session looks at its heartbeat, pings and the server
TAIL_S = 0.2  # how often the logs a session follows are looked at


class Session:
    def __init__(self, ctx: ApiContext, websocket: WebSocket, framed: bool):
        self.ctx = ctx
        self.websocket = websocket
        self.framed = framed  # SockJS frames (o, h, a[...], c[...]); False: a raw WebSocket
        self.registered: set[str] = set()
        self.memory = Memory()
        self.tails: dict[str, LogTail] = {}  # chain id -> its log, followed for the client
        self.last_ping = time.monotonic()
        self.last_sent = time.monotonic()
        self._lock = asyncio.Lock()

    async def run(self) -> None:
        subscription = await self.ctx.feed.subscribe(None, None, self.ctx.stopping)
        # the database fails: the client reconnects later
        with database_failure_said(log, "event bus session ended: %s", level=logging.WARNING):
            try:
                await self.websocket.accept()
                if self.framed:
                    await self._send_raw(sockjs.OPEN)
                reader = asyncio.create_task(self._read(), name="eventbus-read")
                try:
                    await self._deliver(subscription, reader)
                    await self.close()
                finally:
                    reader.cancel()
                    await asyncio.gather(reader, return_exceptions=True)
            except (WebSocketDisconnect, OSError, RuntimeError):
                pass  # the client went away while we were sending
            finally:
                subscription.close()

    async def _deliver(self, subscription: Subscription, reader: asyncio.Task) -> None:
        while not reader.done():
            now = time.monotonic()
            if self.ctx.stopping.is_set() or now - self.last_ping >= sockjs.PING_TIMEOUT_S:
                return
            if self.framed and now - self.last_sent >= sockjs.HEARTBEAT_S:
                await self._send_raw(sockjs.HEARTBEAT)
            events = await subscription.next_batch(TAIL_S if self.tails else WAKE_S)
            for event in events:  # a new run writes a new log
                if event["kind"] == EventKind.CHAIN_STARTED and event.get("chainId") in self.tails:
                    self.tails[event["chainId"]].follow(event.get("run", 1))
            if events and self.registered:
                wanted = set(self.registered)
                events = await enrich(self.ctx.views, events, wanted, self.memory)
                await self.send([sockjs.rec(m.address, m.body, m.headers)
                                 for m in translate(events, self.memory)
                                 if m.address in self.registered])
            elif events:
                translate(events, self.memory)  # keep in mind which agent runs which chain
            for tail in list(self.tails.values()):
                lines = await call(tail.read)
                await self.send([sockjs.rec(m.address, m.body, m.headers) for m in lines])

    async def _read(self) -> None:
        """Handle what the client sends until it goes (or breaks the SockJS framing)."""
        while True:
            try:
                frame = await self.websocket.receive_text()
            except (WebSocketDisconnect, RuntimeError, KeyError):
                return  # gone, or it sent bytes
            if not self.framed:
                await self.handle(frame)
                continue
            try:
                texts = sockjs.client_messages(frame)
            except sockjs.BrokenFrame:
                return  # as SockJS servers do: a broken frame ends the session
            for text in texts:
                await self.handle(text)

    async def handle(self, text: str) -> None:
        """One bridge message from the client."""
        request = sockjs.parse_request(text)
        if isinstance(request, str):
            return await self.send([sockjs.err(request)])
        if request.type == "ping":
            self.last_ping = time.monotonic()
            return  # Vert.x's SockJS bridge answers nothing: the client would warn of a pong
        address = request.address or ""
        if request.type == "register":
            if len(address) > sockjs.MAX_ADDRESS_LENGTH:
                return await self.send([sockjs.err(sockjs.ADDRESS_TOO_LONG)])
            if len(self.registered) >= sockjs.MAX_HANDLERS and address not in self.registered:
                return await self.send([sockjs.err(sockjs.TOO_MANY_HANDLERS)])
            if not permitted(address):
                return await self.send([sockjs.err(sockjs.ACCESS_DENIED)])
            self.registered.add(address)
            await self._follow_log(address)
        elif request.type == "unregister":
            if not permitted(address):
                return await self.send([sockjs.err(sockjs.ACCESS_DENIED)])
            self.registered.discard(address)
            self.tails.pop(address.removeprefix(LOGS_PROCESSCHAINS_PREFIX), None)
        else:  # send, publish: Steep permits nothing inbound
            await self.send([sockjs.err(sockjs.ACCESS_DENIED)])

    async def _follow_log(self, address: str) -> None:
        chain_id = address.removeprefix(LOGS_PROCESSCHAINS_PREFIX)
        if chain_id == address or chain_id in self.tails or self.ctx.log_dir is None:
            return
        runs = await call(self.ctx.views.run_numbers, chain_id)
        tail = LogTail(self.ctx.log_dir, chain_id, self.ctx.log_group_by_prefix,
                       runs[-1] if runs else None, self.ctx.registry.logs)
        await call(tail.read)  # from the end of what is written now: live lines only
        self.tails[chain_id] = tail

    async def send(self, messages: list[str]) -> None:
        """Each message in a WebSocket frame of its own, as Vert.x sends them: sockjs-client hands
        the messages of one frame to the page in one task, and Steep's UI adds a new submission
        to its list only after that task, so an update in the same frame would be lost."""
        for message in messages:
            await self._send_raw(sockjs.array_frame([message]) if self.framed else message)

    async def _send_raw(self, text: str) -> None:
        async with self._lock:
            await self.websocket.send_text(text)
            self.last_sent = time.monotonic()

    async def close(self) -> None:
        if WebSocketState.CONNECTED not in (self.websocket.application_state,
                                            self.websocket.client_state):
            return  # closed already, or the client went
        if self.framed:
            await self._send_raw(sockjs.close_frame())
        async with self._lock:
            await self.websocket.close(code=1000)
