"""Fallbacks (extensions 10): an executable that stands in for the one right before it in
the chain when that one has ended in ERROR after all its attempts.

A cancel, or a timeout without `errorOnTimeout', ends the executable as CANCELLED, which is
not a failure: no fallback runs then. The fallback writes the same output paths (the
generator gave it the action's), gets the failed executable's action id, service, last exit
code and message in its environment (steepy/agent/lastfailure.py makes them), and runs under
its own retry and timeout policies.

The workflow's `catch' comes here as a fallback too (the generator attached it). One with
`stop: true', and the catch, end the chain once they succeed: the outcome is STOPPED, and
the engine skips what needs the failed action's outputs (generator/skipping.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from steepy.agent.config import FAILED, TIMEOUT
from steepy.agent.context import ExecContext, ExecOutcome
from steepy.agent.lastfailure import failed_env
from steepy.agent.recovery import USED_UP, may_recover
from steepy.agent.runner import run_executable
from steepy.errors import SteepyError
from steepy.events import EventKind
from steepy.model.attempt import AttemptRecord
from steepy.model.stopping import CATCH_SUFFIX
from steepy.model.processchain import Executable


@dataclass(frozen=True)
class Step:
    """One executable of a chain and the fallback that follows it, if any."""

    index: int  # of the executable in the chain
    executable: Executable
    fallback: Executable | None = None

    @property
    def last_index(self) -> int:
        return self.index + (1 if self.fallback is not None else 0)


def steps(executables: list[Executable]) -> Iterator[Step]:
    """The chain's executables, each with the fallback right after it."""
    i = 0
    while i < len(executables):
        exe = executables[i]
        after = executables[i + 1] if i + 1 < len(executables) else None
        if after is not None and after.fallback_for == exe.id:
            yield Step(i, exe, after)
            i += 2
        else:
            yield Step(i, exe)
            i += 1


async def run_step(step: Step, ctx: ExecContext) -> ExecOutcome:
    """Run the executable and, if it failed for real, its fallback; never raises for a tool."""
    exe, fallback = step.executable, step.fallback
    outcome = await run_executable(exe, ctx)
    if fallback is None or outcome.status != "ERROR":
        return outcome
    if not await may_recover(fallback, ctx):  # the workflow catch's maxRecoveries
        return ExecOutcome("ERROR", f"{outcome.message or ''}\n{USED_UP}")
    failed = _last_failed(exe, ctx)
    exit_code = None if failed is None else failed.exit_code
    message = outcome.message or ""
    ctx.emit(EventKind.CHAIN_FALLBACK_STARTED, {
        "chainId": ctx.chain_id, "executableId": exe.id, "serviceId": exe.service_id,
        "fallbackId": fallback.id, "fallbackServiceId": fallback.service_id,
        "exitCode": exit_code, "message": message})
    env = {**ctx.base_env, **failed_env(exe, failed, message)}
    stand_in = await run_executable(fallback, replace(ctx, base_env=env))
    if stand_in.status == "ERROR":
        return ExecOutcome("ERROR", f"{message}\nIts fallback failed too: {stand_in.message}")
    if stand_in.status == "SUCCESS" and fallback.stops:
        what = "the workflow's catch" if fallback.id.endswith(CATCH_SUFFIX) else "its fallback"
        return ExecOutcome("STOPPED", f"failed, and {what} ended the chain", fallback.id)
    if stand_in.status == "PRUNED":
        return replace(stand_in, by=fallback.id)
    return stand_in


def _last_failed(exe: Executable, ctx: ExecContext) -> AttemptRecord | None:
    for record in reversed([*ctx.history, *ctx.records]):
        if record.executable_id == exe.id and record.outcome in (FAILED, TIMEOUT):
            return record
    return None


class AdapterFailed(SteepyError):
    """An input adapter failed for one executable of a step."""

    def __init__(self, service_id: str, cause: Exception):
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.service_id = service_id
        self.cause = f"{type(cause).__name__}: {cause}"


def adapted(step: Step, adapt) -> Step:
    """The step with `adapt' (the plugins' input adapters) applied to both executables."""
    def one(exe: Executable) -> Executable:
        try:
            return adapt(exe)
        except Exception as e:
            raise AdapterFailed(exe.service_id, e) from e
    return replace(step, executable=one(step.executable),
                   fallback=None if step.fallback is None else one(step.fallback))
