"""A task waiting for an event with a time limit is cancelled even when the event fires in
the same instant (Python 3.11's wait_for loses that cancellation: a controller cancelled at
shutdown then ran on forever, seen once under load)."""

from __future__ import annotations

import asyncio

from steepy.model.clock import wait_event


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


async def test_in_rounds_waits_out_a_failing_database_and_raises_anything_else(caplog) -> None:
    import logging

    import pytest
    from sqlalchemy.exc import OperationalError

    from steepy.registry.outage import in_rounds

    wake, stop = asyncio.Event(), asyncio.Event()
    calls: list[float] = []
    log = logging.getLogger("test.rounds")

    async def one_round() -> float:
        calls.append(asyncio.get_running_loop().time())
        if len(calls) == 1:
            raise OperationalError("SELECT 1", {}, Exception("disk I/O error"))
        if len(calls) == 2:
            return 60.0  # a long sleep, which `wake` ends
        stop.set()
        return 0.0

    async def wake_soon() -> None:
        while len(calls) < 2:
            await asyncio.sleep(0.01)
        wake.set()

    waker = asyncio.create_task(wake_soon())
    with caplog.at_level(logging.ERROR, logger="test.rounds"):
        await asyncio.wait_for(in_rounds("tester", one_round, wake, stop, log), 30)
    await waker
    assert len(calls) == 3
    assert calls[1] - calls[0] >= 0.9  # the first backoff is 1 s
    assert calls[2] - calls[1] < 30  # woken, not slept out
    assert "tester: " in caplog.text and "trying again in 1 s" in caplog.text

    async def broken() -> float:
        raise ValueError("a bug")

    with pytest.raises(ValueError, match="a bug"):
        await in_rounds("tester", broken, asyncio.Event(), asyncio.Event(), log)
