"""The notifier's loop in one process, on SQLite and PostgreSQL: a refused delivery is tried
again when its retry is due, not at the next sweep, also with two engines on one outbox (the
end-to-end test with two workers once saw no request within 30 s of the receiver coming up).
The sweep is made far longer than the test: only waking for the earliest due retry delivers."""

from __future__ import annotations

import asyncio
import re
import time

from steepy.notifications.delivery import DeliverySettings, Notifier
from steepy.events.webhooks import Webhook
from steepy.registry import Registry, open_registry
from steepy.registry.offload import call
from tests.notifications.receiver import Receiver, free_port

SWEEP_S = 600.0  # longer than any wait here: a notifier that slept a sweep fails the test


def _pending(registry: Registry, count: int) -> None:
    """`count` submissions cancelled: a delivery each (a final status)."""
    from steepy.model import Submission, Workflow

    for i in range(count):
        registry.requests.add_submission(Submission(id=f"s{i}", workflow=Workflow(name="w"),
                                                    name=f"s{i}"))
        registry.requests.cancel_submission(f"s{i}")


async def _until(what: str, check, registry: Registry, timeout_s: float) -> list[dict]:
    end = time.monotonic() + timeout_s
    while True:
        found = (await call(registry.outbox.deliveries, size=100))[0]
        if check(found):
            return found
        assert time.monotonic() < end, f"never, in {timeout_s:.0f} s: {what}: {found}"
        await asyncio.sleep(0.05)


async def _refused_then_delivered(database_url: str, engines: int, count: int) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/hook"
    webhook = Webhook(url)
    settings = DeliverySettings(subscribers=(webhook,), max_attempts=1000, delay_ms=300,
                                max_delay_ms=300, timeout_s=2.0, sweep_s=SWEEP_S)
    registries = [open_registry(database_url, [webhook]) for _ in range(engines)]
    notifiers = [Notifier(r.outbox, f"engine-{i + 1}", settings)
                 for i, r in enumerate(registries)]
    stop = asyncio.Event()
    tasks = [asyncio.create_task(n.run(stop)) for n in notifiers]
    try:
        await asyncio.sleep(0.5)  # every notifier has looked, found nothing, sleeps the sweep
        await call(_pending, registries[0], count)
        for notifier in notifiers:  # as an engine does when it notices a commit
            notifier.wake()
        await _until("every delivery refused twice (a retry after the refusal)",
                     lambda found: len(found) == count
                     and all(d["attempts"] >= 2 for d in found), registries[0], 30)
        with Receiver(port) as receiver:
            # due again 0.15-0.3 s after each refusal; 20 s is a margin for a loaded machine
            await _until("all delivered", lambda found: {d["status"] for d in found}
                         == {"DELIVERED"}, registries[0], 20)
            await asyncio.sleep(0.3)
            keys = [r.key for r in receiver.requests]
    finally:
        stop.set()
        for notifier in notifiers:
            notifier.wake()
        await asyncio.wait_for(asyncio.gather(*tasks), 30)
        for registry in registries:
            registry.engine.dispose()
    assert len(keys) == len(set(keys)) == count  # each sent once, by one of the engines


async def test_a_refused_delivery_is_tried_again_when_due_not_at_the_sweep(
        database_url: str) -> None:
    await _refused_then_delivered(database_url, engines=1, count=1)


async def test_two_engines_try_refused_deliveries_again_when_due(database_url: str) -> None:
    await _refused_then_delivered(database_url, engines=2, count=6)


async def test_a_try_that_fails_outside_http_counts_and_gives_up(tmp_path) -> None:
    """A try that raised what is not an HTTP error (a URL httpx cannot use) escaped the
    delivery's error handling: never recorded, tried again at each lease for ever, and the
    log said neither the delivery nor its receiver."""
    hook = Webhook(url="http://127.0.0.1:99999/x")  # (the configuration refuses this port)
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}", [hook])
    try:
        await call(_pending, registry, 1)
        for _ in range(2):
            settings = DeliverySettings(subscribers=(hook,), max_attempts=2, delay_ms=0)
            await Notifier(registry.outbox, "engine-1", settings).flush()
        [delivery] = (await call(registry.outbox.deliveries, size=10))[0]
    finally:
        registry.engine.dispose()
    assert (delivery["status"], delivery["attempts"]) == ("FAILED", 2)
    # (getaddrinfo or connect says it, as the resolver goes)
    assert re.fullmatch(r"OverflowError: (\w+\(\): )?port must be 0-65535\.",
                        delivery["lastError"])
