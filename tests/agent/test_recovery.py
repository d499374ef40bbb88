"""Whether the workflow's catch may run (agent/recovery.py), asked of the real registry."""

from __future__ import annotations

import asyncio
import functools
from datetime import datetime, timezone

from steepy.agent.cancel import CancelToken
from steepy.agent.config import AgentConfig
from steepy.agent.context import ExecContext
from steepy.agent.recovery import may_recover
from steepy.model.attempt import INTERRUPTED, AttemptRecord
from steepy.model.processchain import Executable
from steepy.registry import open_registry
from steepy.registry.offload import call
from steepy.registry.recoveries import Recoveries
from tests.registry.test_recoveries import CATCH, _submitted

CATCH_EXE = Executable(id="a.catch", path="sh", service_id="sh", fallback_for="a", stops=True)


def _context(recoveries: Recoveries, chain_id: str, run: int, history=()) -> ExecContext:
    async def claim(first: AttemptRecord) -> bool:
        return await call(recoveries.claim, "s", chain_id, run, first)

    return ExecContext(AgentConfig(), CancelToken(asyncio.get_running_loop()), chain_id, "s",
                       run, {}, lambda exe, lines: None, lambda kind, data: None,
                       history=tuple(history), claim_recovery=claim)


async def test_a_catch_a_cut_run_began_goes_on_without_a_new_claim(tmp_path) -> None:
    registry = open_registry(f"sqlite:///{tmp_path / 'db.sqlite'}")
    a, b = _submitted(registry, "s", CATCH)  # maxRecoveries: 2
    recoveries = Recoveries(registry.db)
    assert await may_recover(CATCH_EXE, _context(recoveries, a, 1))
    assert await may_recover(CATCH_EXE, _context(recoveries, b, 1))
    assert not await may_recover(CATCH_EXE, _context(recoveries, a, 2))  # used up
    cut = AttemptRecord("a.catch", "sh", 1, datetime.now(timezone.utc), outcome=INTERRUPTED,
                        fallback_for="a")
    assert await may_recover(CATCH_EXE, _context(recoveries, a, 2, [cut]))
    plain = functools.partial(Executable, path="sh", service_id="sh", fallback_for="a")
    assert await may_recover(plain(id="a.fallback"), _context(recoveries, a, 3))  # not a catch
