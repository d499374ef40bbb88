"""retry-delays.yaml Part 2 (`retry_loop`) replayed against the agent's retry loop."""

from __future__ import annotations

import asyncio
import time

import pytest

from steepy.agent.cancel import Cancelled
from steepy.agent.retry import SKIPPED, Retrying
from steepy.model.policies import RetryPolicy
from tests.conftest import conformance_params

CASES = conformance_params("retry-delays.yaml", "retry_loop", id=lambda c: c["name"])
# Upper bound on each pause: its length, plus the most a probe timer on the same event loop fired
# late meanwhile (what this machine delivered: a loaded one is allowed to be late), plus this
# slack for the bookkeeping around the pause. Never a speed assertion about an idle machine.
SLACK_MS = 50


@pytest.mark.parametrize("case", CASES)
async def test_retry_loop(case: dict) -> None:
    policy = None if case["policy"] is None else RetryPolicy.from_json(case["policy"])
    outcomes = case["outcomes"]
    expected = case["expected"]
    starts: list[float] = []
    ends: list[float] = []

    async def operation(attempt: int) -> str:
        starts.append(time.monotonic())
        kind = outcomes[len(starts) - 1]
        try:
            if kind == "fail":
                raise RuntimeError(f"Attempt {len(starts)}")
            if kind == "cancel":
                raise Cancelled(f"Cancel {len(starts)}")
            return "ok"
        finally:
            ends.append(time.monotonic())

    task = asyncio.ensure_future(Retrying(policy)(operation))
    probe_late = [0.0]
    probe = asyncio.ensure_future(_probe(probe_late))
    begin = time.monotonic()
    if "external_cancel_after_ms" in case:
        asyncio.get_running_loop().call_later(case["external_cancel_after_ms"] / 1000,
                                              task.cancel, "CANCELLED!")
    result, message = None, None
    try:
        value = await task
        result = "skipped" if value is SKIPPED else "ok"
    except asyncio.CancelledError as e:
        result, message = "cancelled", e.args[0] if e.args else None
    except Cancelled as e:
        result, message = "cancelled", str(e)
    except RuntimeError as e:
        result, message = "error", str(e)
    finally:
        probe.cancel()
    total_ms = (time.monotonic() - begin) * 1000
    slack = probe_late[0] + SLACK_MS

    assert len(starts) == expected["calls"]
    assert result == expected["result"]
    if "message" in expected:
        assert message == expected["message"]
    if "waits_ms" in expected:
        waits = [(starts[i + 1] - ends[i]) * 1000 for i in range(len(starts) - 1)]
        assert len(waits) == len(expected["waits_ms"])
        for wait, want in zip(waits, expected["waits_ms"]):
            assert want - 1 <= wait <= want + slack, (wait, probe_late[0])
    if "max_total_ms" in expected:
        assert total_ms <= expected["max_total_ms"] + slack, (total_ms, probe_late[0])


async def _probe(worst: list[float]) -> None:
    """How late a timer on this loop fires (one every 5 ms), at worst."""
    loop = asyncio.get_running_loop()
    while True:
        due = loop.time() + 0.005
        await asyncio.sleep(0.005)
        worst[0] = max(worst[0], (loop.time() - due) * 1000)
