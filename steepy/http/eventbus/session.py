"""One client of the event bus bridge: what it registers to, and the messages it receives.

Each session follows the live feed (steepy/engine/feed.py) from the moment it opens, translates the
events into Steep's messages (messages.py) and sends those whose address the client has
registered to. A client that registers is caught up on the last seconds (catchup.py), at once
and AGAIN_S later. It closes when the client goes, when the client sends no ping for
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
from steepy.http.eventbus.catchup import RECENT_MAX, Recent
from steepy.http.eventbus.logtail import LogTail
from steepy.http.eventbus.lookups import enrich, newest_events
from steepy.http.eventbus.messages import (LOGS_PROCESSCHAINS_PREFIX, Memory, Message,
                                           permitted, translate)
from steepy.registry.failures import is_database_failure
from steepy.registry.offload import call
from steepy.registry.outage import database_failure_said

log = logging.getLogger(__name__)

WAKE_S = 0.5  # how often a quiet session looks at its heartbeat, pings and the server
TAIL_S = 0.2  # how often the logs a session follows are looked at
AGAIN_S = 1.0  # a client is caught up on an address when it registers, and this much later


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
        self.recent = Recent()  # the last seconds' events, for clients that register
        # held while a batch of events is handled and while a client registers: a client is
        # caught up on the events before its register and sent those after it, none lost
        self._turn = asyncio.Lock()
        self._again: dict[str, asyncio.Task] = {}  # address -> its catching up again

    async def run(self) -> None:
        try:
            history = await call(newest_events, self.ctx.views, RECENT_MAX)
        except Exception as e:  # the database fails: no catching up; the feed says it again
            if not is_database_failure(e):
                raise
            history = []
        self.recent.add(history, time.time())
        subscription = await self.ctx.feed.subscribe(history[-1]["id"] if history else None,
                                                     None, self.ctx.stopping)
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
                    for task in (reader, *self._again.values()):
                        task.cancel()
                    await asyncio.gather(reader, *self._again.values(), return_exceptions=True)
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
            if events:
                async with self._turn:
                    await self._publish(events)
            for tail in list(self.tails.values()):
                lines = await call(tail.read)
                await self.send([sockjs.rec(m.address, m.body, m.headers) for m in lines])

    async def _publish(self, events: list[dict]) -> None:
        """Send the messages of `events` to the addresses registered, and remember them."""
        if self.registered:
            events = await enrich(self.ctx.views, events, set(self.registered), self.memory)
            await self.send([sockjs.rec(m.address, m.body, m.headers)
                             for m in translate(events, self.memory)
                             if m.address in self.registered])
        else:
            translate(events, self.memory)  # keep in mind which agent runs which chain
        self.recent.add(events, time.time())

    async def _say(self, said: list[Message]) -> None:
        await self.send([sockjs.rec(m.address, m.body, m.headers) for m in said])

    async def _catch_up_again(self, address: str, said: list[Message]) -> None:
        """AGAIN_S after registering, what the client was caught up on is said once more
        (what has a newer value since is not): Steep's UI may apply the list it fetched only
        after the first catching up arrived, and the list then overwrote it."""
        await asyncio.sleep(AGAIN_S)
        async with self._turn:
            self._again.pop(address, None)
            newest = self.recent.replay(address, time.time())
            try:
                await self._say([m for m in newest if m in said])
            except (WebSocketDisconnect, OSError, RuntimeError):
                pass  # the client went away: the session ends

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
            async with self._turn:
                if address not in self.registered:
                    self.registered.add(address)
                    said = self.recent.replay(address, time.time())
                    await self._say(said)
                    if said:
                        self._again[address] = asyncio.create_task(
                            self._catch_up_again(address, said), name="eventbus-again")
            await self._follow_log(address)
        elif request.type == "unregister":
            if not permitted(address):
                return await self.send([sockjs.err(sockjs.ACCESS_DENIED)])
            self.registered.discard(address)
            again = self._again.pop(address, None)
            if again is not None:
                again.cancel()
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
