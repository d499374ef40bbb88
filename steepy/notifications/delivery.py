"""Sending notifications: an engine's loop over the outbox.

Any engine with webhooks (or e-mail) configured delivers every due delivery to them,
whichever engine wrote it. It claims deliveries under a lease (so no other engine sends them
meanwhile), POSTs each with httpx (or hands it to the SMTP server: smtplib in threads of
its own, never the event loop's, which the engine's database calls use) under a time limit
of its own (a receiver that hangs holds up nothing else), and records the
outcome: a 2xx (or a message the server took) is DELIVERED; anything else is tried again
after an exponential delay with jitter, up to `maxAttempts` tries, then FAILED (kept for
`steepy notifications --failed`). A template that cannot render a delivery makes it FAILED
at once (another try would render it the same). Whatever else a try raises is a failed try
too, said with the delivery's key and receiver. An engine that dies mid-send leaves its
deliveries PENDING; when their lease has run out another engine (or the same, restarted)
sends them again: at least once, with the same Idempotency-Key each time.

The loop sleeps until the next delivery is due, or until the engine notices a commit
(`wake`): never busy-polling.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from steepy.model.backoff import EqualJitter, Exponential
from steepy.model.clock import SYSTEM, Clock
from steepy.model.durations import later
from steepy.events.email import Email
from steepy.events.templates import TemplateProblem
from steepy.events.webhooks import Subscriber, Webhook, headers
from steepy.registry.interfaces import Outbox
from steepy.registry.offload import call
from steepy.registry.records import Delivery
from steepy.registry.failures import masked
from steepy.registry.outage import database_failure_said, in_rounds

if TYPE_CHECKING:
    import httpx  # imported when there are webhooks: it takes a tenth of a second

log = logging.getLogger(__name__)
LEASE_MARGIN_S = 5.0  # a claim lasts one request's time limit and this


@dataclass(frozen=True)
class DeliverySettings:
    """`notifications.*' of the configuration."""

    subscribers: tuple[Subscriber, ...] = ()  # webhooks, e-mail
    max_attempts: int = 10
    delay_ms: int = 1000  # before the second try
    max_delay_ms: int = 300_000
    timeout_s: float = 10.0  # of one request
    in_flight: int = 16  # requests at once
    sweep_s: float = 30.0  # look at the outbox at least this often
    rng: random.Random = field(default_factory=random.Random, compare=False)

    def retry_delay_ms(self, attempts: int) -> int:
        """The delay after the `attempts`th try failed: delay*2^(n-1), capped, then
        randomised in [d/2, d] (equal jitter), so receivers back up do not all get their
        retries at once."""
        capped = min(Exponential().raw(self.delay_ms, 2, attempts), self.max_delay_ms)
        return EqualJitter().apply(capped, self.rng) if capped > 0 else 0


def _error(e: BaseException, timeout_s: float) -> str:
    import httpx

    while isinstance(e, BaseExceptionGroup) and e.exceptions:  # (anyio's task groups)
        e = e.exceptions[0]

    if isinstance(e, (httpx.TimeoutException, TimeoutError)):
        return f"no answer within {timeout_s:g} s ({type(e).__name__})"
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__


def _refusal(response: httpx.Response) -> str:
    text = response.text.strip().replace("\n", " ")
    return f"HTTP {response.status_code}" + (f": {text[:200]}" if text else "")


class Notifier:
    def __init__(self, outbox: Outbox, owner: str, settings: DeliverySettings,
                 clock: Clock = SYSTEM):
        self.outbox = outbox
        self.clock = clock
        self.owner = owner
        self.settings = settings
        self.subscribers = {s.url: s for s in settings.subscribers}
        self.lease_s = settings.timeout_s + LEASE_MARGIN_S
        self._wake = asyncio.Event()
        self._sending: set[asyncio.Task] = set()
        self._mailers: ThreadPoolExecutor | None = None  # smtplib's threads (`_mail')

    def wake(self) -> None:
        """Something was committed: a delivery may be due."""
        self._wake.set()

    async def run(self, stop: asyncio.Event) -> None:
        """Deliver until `stop` is set, then wait (at most one request's time limit) for the
        requests under way."""
        if not self.subscribers:
            return
        try:
            async with self._client() as client:
                await in_rounds("notifications", lambda: self._round(client), self._wake, stop,
                                log, self.clock)
                await self._finish_sending()
        finally:
            self._let_mailers_go()

    async def flush(self) -> None:
        """Send what is due now and wait for the answers (`steepy run` before it exits)."""
        if not self.subscribers:
            return
        try:
            async with self._client() as client:
                with database_failure_said(log, "notifications: %s; a worker delivers them"):
                    await self._round(client)
                await self._finish_sending()
        finally:
            self._let_mailers_go()

    def _let_mailers_go(self) -> None:
        """The SMTP threads end once their sends do (each bounded by the time limit)."""
        mailers, self._mailers = self._mailers, None
        if mailers is not None:
            mailers.shutdown(wait=False)

    def _client(self) -> contextlib.AbstractAsyncContextManager[httpx.AsyncClient | None]:
        """An HTTP client when there are webhooks (httpx takes a while to import)."""
        if not any(isinstance(s, Webhook) for s in self.subscribers.values()):
            return contextlib.nullcontext()
        import httpx

        return httpx.AsyncClient(timeout=self.settings.timeout_s)

    async def _finish_sending(self) -> None:
        if self._sending:
            await asyncio.wait(set(self._sending), timeout=self.settings.timeout_s + 1)

    async def _round(self, client: httpx.AsyncClient | None) -> float:
        """Start sending what is due (as many as may be under way); how long to sleep."""
        room = self.settings.in_flight - len(self._sending)
        if room > 0:
            claimed = await call(self.outbox.claim_deliveries, self.owner, list(self.subscribers),
                                 room, self.lease_s)
            for delivery in claimed:
                task = asyncio.create_task(self._send(client, delivery),
                                           name=f"notification {delivery.key}")
                self._sending.add(task)
                task.add_done_callback(self._sent)
            if len(claimed) == room:
                return 0.0 if len(self._sending) < self.settings.in_flight else self.lease_s
        due = await call(self.outbox.next_delivery_due, list(self.subscribers))
        if due is None:
            return self.settings.sweep_s
        return min(max((due - self.clock.now()).total_seconds(), 0.0) + 0.01,
                   self.settings.sweep_s)

    def _sent(self, task: asyncio.Task) -> None:
        self._sending.discard(task)
        self._wake.set()  # room for another
        if not task.cancelled() and task.exception() is not None:
            log.error("notifications: %s", task.exception())

    async def _send(self, client: httpx.AsyncClient | None, delivery: Delivery) -> None:
        subscriber = self.subscribers[delivery.url]
        final = False
        try:
            if isinstance(subscriber, Email):
                error, final = await self._mail(subscriber, delivery)
            else:
                assert client is not None and isinstance(subscriber, Webhook)
                error = await self._post(client, subscriber, delivery)
        except TemplateProblem as e:
            error, final = str(e), True
        except Exception as e:  # noqa: BLE001 - a try that failed otherwise: counted, said
            error = _error(e, self.settings.timeout_s)
        # a failure to record: its lease runs out and it is sent again (at least once)
        with database_failure_said(log, "notification %s: cannot record the outcome: %s",
                                   delivery.key):
            if error is None:
                await call(self.outbox.delivered, delivery.id)
                return
            give_up = final or delivery.attempts >= self.settings.max_attempts
            next_try = None if give_up else later(
                self.clock.now(), self.settings.retry_delay_ms(delivery.attempts))
            (log.error if give_up else log.warning)(
                "notification %s to %s, try %d: %s%s", delivery.key, masked(delivery.url),
                delivery.attempts, error, "; giving up" if give_up else "")
            await call(self.outbox.delivery_failed, delivery.id, self.owner, error, next_try)

    async def _post(self, client: httpx.AsyncClient, webhook: Webhook,
                    delivery: Delivery) -> str | None:
        """POST a delivery; None, or why it was not delivered."""
        import httpx

        raw = webhook.raw_body(delivery.body)  # signed as sent
        try:
            # httpx's timeout is per phase; a receiver trickling its answer ends here too
            async with asyncio.timeout(self.settings.timeout_s):
                response = await client.post(
                    delivery.url, content=raw,
                    headers=headers(webhook, delivery.key, delivery.kind, raw))
        except (httpx.HTTPError, TimeoutError) as e:
            return _error(e, self.settings.timeout_s)
        return None if 200 <= response.status_code < 300 else _refusal(response)

    async def _mail(self, email: Email, delivery: Delivery) -> tuple[str | None, bool]:
        """Send a delivery by e-mail: None or why not, and whether that is final."""
        from steepy.notifications.smtp import SmtpRefused, send

        message = email.message(delivery.body, delivery.key)
        if self._mailers is None:  # (a hung server holds these, not the engine's threads)
            self._mailers = ThreadPoolExecutor(self.settings.in_flight, "steepy smtp")
        try:
            async with asyncio.timeout(self.settings.timeout_s):
                await asyncio.get_running_loop().run_in_executor(
                    self._mailers, send, email, message, self.settings.timeout_s)
        except TimeoutError:
            return f"no answer within {self.settings.timeout_s:g} s (TimeoutError)", False
        except SmtpRefused as e:
            return str(e), e.final
        return None, False
