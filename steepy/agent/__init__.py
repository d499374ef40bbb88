"""The local agent: runs a process chain's executables as supervised subprocesses."""

from steepy.agent.cancel import Cancelled, CancelToken
from steepy.agent.config import AgentConfig, AttemptRecord, ChainOutcome
from steepy.agent.local import LocalAgent
from steepy.agent.logs import log_path

__all__ = ["AgentConfig", "AttemptRecord", "CancelToken", "Cancelled", "ChainOutcome",
           "LocalAgent", "log_path"]
