"""A task waiting for an event with a time limit is cancelled even when the event fires in
the same instant (Python 3.11's wait_for loses that cancellation: a controller cancelled at
shutdown then ran on forever, seen once under load)."""

from __future__ import annotations

import asyncio

from steepy.waiting import wait_event


async def _cancelled_as_the_event_fires(wait) -> bool:
    event = asyncio.Event()
    waiter = asyncio.create_task(wait(event))
    await asyncio.sleep(0)  # the waiter is waiting now
    event.set()
    waiter.cancel()  # in the same instant
    try:
        await waiter
    except asyncio.CancelledError:
        return True
    return False


async def test_a_cancellation_is_never_lost() -> None:
    assert all([await _cancelled_as_the_event_fires(lambda e: wait_event(e, 10))
                for _ in range(20)])


async def test_the_time_limit_and_the_event() -> None:
    event = asyncio.Event()
    assert await wait_event(event, 0.01) is False
    asyncio.get_running_loop().call_later(0.01, event.set)
    assert await wait_event(event, 10) is True
