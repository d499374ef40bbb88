"""The local agent: runs a process chain's executables as supervised subprocesses.

    agent = LocalAgent("agent-1", AgentConfig(), progress_estimator=None, on_event=None)
    outcome = await agent.execute(chain, submission_id="...", run_number=1)
    agent.cancel(chain.id)   # any thread, any moment (also before execute starts the chain)

`outcome` is a `ChainOutcome`: status SUCCESS (with results), ERROR or CANCELLED (with the
error message, also for a timeout that ends the chain as CANCELLED), and an `AttemptRecord` for
every attempt. Modules: `interface` (what the scheduler needs of an agent), `process` (one
supervised subprocess: lines, timers), `tree` (its process tree, ended on timeout or
cancel), `retry` (the retry loop), `runner` (one executable under its policies, started by
its runtime, steepy/runtimes), `outputs` (output directories, results), `logs` (per-chain
log files), `local` (the agent).
"""

from steepy.agent.cancel import Cancelled, CancelToken
from steepy.agent.config import AgentConfig, AttemptRecord, ChainOutcome
from steepy.agent.interface import Agent
from steepy.agent.local import LocalAgent
from steepy.agent.logs import log_path

__all__ = ["Agent", "AgentConfig", "AttemptRecord", "CancelToken", "Cancelled", "ChainOutcome",
           "LocalAgent", "log_path"]
