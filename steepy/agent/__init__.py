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

from typing import TYPE_CHECKING

from steepy import lazy_attributes

# name -> the module that defines it, imported on first use: `steepy logs` reads a log file
# (steepy.agent.logsource) without loading the agent and its runtimes
_HOMES = {"Cancelled": "steepy.agent.cancel", "CancelToken": "steepy.agent.cancel",
          "AgentConfig": "steepy.agent.config", "AttemptRecord": "steepy.agent.config",
          "ChainOutcome": "steepy.agent.config", "Agent": "steepy.agent.interface",
          "LocalAgent": "steepy.agent.local", "log_path": "steepy.agent.logsource"}

__all__ = sorted(_HOMES)

__getattr__, __dir__ = lazy_attributes(globals(), _HOMES)

if TYPE_CHECKING:  # what type checkers see
    from steepy.agent.cancel import Cancelled, CancelToken  # noqa: F401
    from steepy.agent.config import AgentConfig, AttemptRecord, ChainOutcome  # noqa: F401
    from steepy.agent.interface import Agent  # noqa: F401
    from steepy.agent.local import LocalAgent  # noqa: F401
    from steepy.agent.logsource import log_path  # noqa: F401
