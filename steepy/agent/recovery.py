"""Whether the workflow's catch may run (extensions 10, `maxRecoveries').

The engine counts the catch's runs in the database (steepy/registry/recoveries.py); the
agent asks it right before the catch would start. A catch that a cut run had begun goes on
without asking: it was counted when it began. Without an engine (no `claim_recovery' in the
context) nothing is counted.
"""

from __future__ import annotations

from steepy.agent.context import ExecContext
from steepy.model.attempt import RUNNING, AttemptRecord
from steepy.model.processchain import Executable
from steepy.model.stopping import CATCH_SUFFIX

USED_UP = "The workflow's catch did not run: its maxRecoveries are used up."


async def may_recover(stand_in: Executable, ctx: ExecContext) -> bool:
    """False when `stand_in` is the workflow's catch and its maxRecoveries are used up."""
    if ctx.claim_recovery is None or not stand_in.id.endswith(CATCH_SUFFIX):
        return True
    if stand_in.retries is not None and stand_in.retries.max_attempts == 0:
        return True  # it will not run: nothing to count
    if any(record.executable_id == stand_in.id for record in ctx.history):
        return True  # a cut run began it
    first = AttemptRecord(stand_in.id, stand_in.service_id, 1, start_time=ctx.clock.now(),
                          outcome=RUNNING, fallback_for=stand_in.fallback_for,
                          ordinal=len(ctx.records))
    return await ctx.claim_recovery(first)
