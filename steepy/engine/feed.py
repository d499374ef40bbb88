"""The live feed: the timeline as it is committed, for every consumer in this process.

One reader per process follows the database: it wakes when the process's change watcher
(changes.py, shared with the engine) says something was committed, reads the new events once
and hands them to every subscriber, so a hundred open streams cost one query per
commit, not a hundred polls. Events come from the database only, so those of other processes
(remote workers, another server) arrive like this process's own. Event ids follow the order of
commits (the registry writes a transaction's events under a lock at its end), so a subscriber
that has seen id N resumes after N (`Last-Event-ID`) and misses nothing.
"""

from __future__ import annotations

import asyncio
import bisect
import logging
import time
from datetime import datetime
from itertools import islice
from typing import Callable

from steepy.engine.changes import Change, ChangeWatcher
from steepy.errors import SteepyError
from steepy.registry import ReadViews
from steepy.registry.failures import describe, is_database_failure
from steepy.registry.offload import call
from steepy.registry.outage import Outage
from steepy.model.backoff import LIVE_OUTAGE
from steepy.model.clock import SYSTEM, Clock

log = logging.getLogger(__name__)

BATCH = 1000  # events read per query
QUEUE = 10_000  # events a subscriber may have waiting before it reads from the database again
# upper bounds (seconds) of the delivery delay histogram's buckets (/metrics); one more: above
DELAY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
STAMPS = 20_000  # event times kept parsed, so that each is parsed once, not once per client
ENCODED = 20_000  # events kept as server-sent-event bytes, so that each is encoded once


class FeedFailed(SteepyError):
    """The live feed stopped on a bug (its own or its change watcher's): every subscription
    open then ends with this; the next subscriber starts the feed again."""


class Subscription:
    """What one consumer receives: events after `after`, of one submission or of all."""

    def __init__(self, feed: "Feed", after: int, submission_id: str | None):
        self.feed = feed
        self.after = after  # the last event delivered
        self.submission_id = submission_id
        self._queue: asyncio.Queue[list[dict]] = asyncio.Queue()  # batches, as committed
        self._queued = 0  # events in the queue
        self._behind = True  # read from the database before taking the queue
        self.since = time.time()  # older events wait from here (delivery delay)
        self._failure: BaseException | None = None  # what stopped the feed

    def offer(self, events: list[dict]) -> None:
        if self.submission_id is not None:
            events = [e for e in events if e.get("submissionId") == self.submission_id]
        if not events:
            return
        if self._queued + len(events) > QUEUE:  # a slow consumer: it catches up from the database
            self._behind = True
            return
        self._queue.put_nowait(events)
        self._queued += len(events)

    async def next_batch(self, timeout: float) -> list[dict]:
        """The next events (oldest first), or [] after `timeout` seconds without any; raises
        FeedFailed once the feed has stopped on an error."""
        self._check()
        if self._behind:
            self._behind = False
            self._drain()  # the database has them all, in order
            found = await call(self.feed.views.feed, self.after, self.submission_id, BATCH)
            if len(found) == BATCH:
                self._behind = True  # more to read before the queue
            if found:
                self.after = found[-1]["id"]
                self.feed.record_delivery(found, self.since)
                return found
        try:
            async with asyncio.timeout(timeout):
                first = await self._queue.get()
        except TimeoutError:
            return []
        self._queued -= len(first)
        self._check()
        out = [*first, *self._drain()]
        out = [e for e in out if e["id"] > self.after]  # read from the database already
        if out:
            self.after = out[-1]["id"]
            self.feed.record_delivery(out, self.since)
        return out

    def _drain(self) -> list[dict]:
        items: list[dict] = []
        while not self._queue.empty():
            items += self._queue.get_nowait()
        self._queued = 0
        return items

    def fail(self, error: BaseException) -> None:
        """The feed stopped on `error`: the next call of next_batch (a waiting one at once)
        raises FeedFailed."""
        self._failure = error
        self._queue.put_nowait([])

    def _check(self) -> None:
        if self._failure is not None:
            raise FeedFailed(f"the live feed stopped: {self._failure}") from self._failure

    def close(self) -> None:
        self.feed.subscribers.discard(self)


class Feed:
    def __init__(self, views: ReadViews, watcher: ChangeWatcher, poll_s: float = 0.05,
                 clock: Clock = SYSTEM):
        self.views = views
        self.watcher = watcher  # the process's one (changes.py)
        self.poll_s = poll_s  # the database is read at most this often
        self.clock = clock  # its waits
        self.subscribers: set[Subscription] = set()
        self.last_id = 0  # the newest event handed out
        self.delivered = 0  # events handed to subscribers (for /metrics)
        # how long events took to reach a subscriber, from their time (stamped in the
        # transaction that commits them) or the subscription, whichever is later: counts
        # per DELAY_BUCKETS bucket, and their sum
        self.delay_counts = [0] * (len(DELAY_BUCKETS) + 1)
        self.delay_sum = 0.0
        self._stamps: dict[int, float] = {}  # event id -> its time (POSIX seconds)
        self._encoded: dict[int, bytes] = {}  # event id -> its server-sent event
        self._task: asyncio.Task | None = None
        self._started = asyncio.Event()
        self._changed = asyncio.Event()  # the watcher saw a commit, crashed, or `stop` was set
        self._crash: BaseException | None = None  # what killed the watcher

    async def subscribe(self, after: int | None, submission_id: str | None = None,
                        stop: asyncio.Event | None = None) -> Subscription:
        """A subscription from event `after` on (None: from now). Raises what stopped the
        feed before it started (the database failing: the client is answered 503)."""
        self.start(stop)
        task = self._task
        assert task is not None
        started = asyncio.ensure_future(self._started.wait())
        try:
            await asyncio.wait([started, task], return_when=asyncio.FIRST_COMPLETED)
        finally:
            started.cancel()
        if not self._started.is_set() and not task.cancelled():
            task.result()
        subscription = Subscription(self, self.last_id if after is None else after,
                                    submission_id)
        self.subscribers.add(subscription)
        return subscription

    def record_delivery(self, events: list[dict], since: float) -> None:
        now = time.time()
        self.delivered += len(events)
        for event in events:
            stamp = self._stamps.get(event["id"])
            if stamp is None:
                try:
                    stamp = self._stamps[event["id"]] = datetime.fromisoformat(
                        event["time"]).timestamp()
                except (KeyError, TypeError, ValueError):
                    continue
                if len(self._stamps) > STAMPS:  # forget the oldest half
                    for key in list(islice(self._stamps, STAMPS // 2)):
                        del self._stamps[key]
            delay = max(0.0, now - max(since, stamp))
            self.delay_counts[bisect.bisect_left(DELAY_BUCKETS, delay)] += 1
            self.delay_sum += delay

    def encoded(self, events: list[dict], encode: Callable[[dict], bytes]) -> bytes:
        """`events` as one piece of bytes, each event encoded once for all subscribers."""
        cache = self._encoded
        parts = []
        for event in events:
            part = cache.get(event["id"])
            if part is None:
                part = cache[event["id"]] = encode(event)
                if len(cache) > ENCODED:  # forget the oldest half
                    for key in list(islice(cache, ENCODED // 2)):
                        del cache[key]
            parts.append(part)
        return b"".join(parts)

    def start(self, stop: asyncio.Event | None = None) -> None:
        """Follow the database in this event loop (once), until `stop` is set."""
        if self._task is None or self._task.done():
            self._started.clear()
            self._task = asyncio.get_running_loop().create_task(
                self.run(stop or asyncio.Event()), name="feed")
            self._task.add_done_callback(self._ended)

    def _on_change(self, _change: Change) -> None:
        self._changed.set()

    def _on_crash(self, error: BaseException) -> None:
        """The watcher died of a bug: nothing would wake the feed again, so it stops too."""
        self._crash = error
        self._changed.set()

    def _ended(self, task: asyncio.Task) -> None:
        """The feed's run ended: on an error, loudly, and every stream open ends with it (its
        client reconnects, which starts the feed again)."""
        if task.cancelled() or task.exception() is None:
            return
        error = task.exception()
        assert error is not None
        if is_database_failure(error):  # its first read: the subscriber was answered 503
            log.error("live feed: %s; it starts again with the next client", describe(error))
        else:
            log.critical("live feed failed: %s", error, exc_info=error)
        for subscription in list(self.subscribers):
            subscription.fail(error)

    async def run(self, stop: asyncio.Event) -> None:
        self._changed.clear()
        self._crash = None
        # before the last id is read; should the watcher die, so does the feed (`_on_crash`)
        unsubscribe = self.watcher.subscribe(self._on_change, self._on_crash)
        stopping = asyncio.ensure_future(stop.wait())
        stopping.add_done_callback(lambda _: self._changed.set())
        outage = Outage("live feed", log, policy=LIVE_OUTAGE)  # a page is at most 1 s behind
        try:
            self.last_id = await call(self.views.last_event_id)
            self._started.set()
            while not stop.is_set():
                await self._changed.wait()
                self._changed.clear()
                if self._crash is not None:
                    raise FeedFailed(f"its change watcher failed: {self._crash}") from self._crash
                if stop.is_set():
                    break
                try:
                    await self._hand_out()
                    outage.over()
                except Exception as e:  # the database fails: the subscribers wait; look again
                    wait_s = outage.wait_after(e)
                    self.watcher.distrust()  # its watching connection may be as dead as ours
                    self._changed.set()
                    await self.clock.wait(stop, wait_s)
                await self.clock.wait(stop, self.poll_s)  # commits meanwhile: read together
        finally:
            unsubscribe()
            stopping.cancel()

    async def _hand_out(self) -> None:
        while True:
            found = await call(self.views.feed, self.last_id, None, BATCH)
            if not found:
                return
            self.last_id = found[-1]["id"]
            for subscription in list(self.subscribers):
                subscription.offer(found)
            if len(found) < BATCH:
                return
