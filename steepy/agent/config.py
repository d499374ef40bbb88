"""Settings of a local agent and what it hands back after running a process chain."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

# one attempt's record is a model the registry shares (extensions section 4)
from steepy.model.attempt import (CANCELLED, FAILED, REQUEUED, SKIPPED, SUCCESS,  # noqa: F401
                                  TIMEOUT, AttemptRecord)
from steepy.model.submission import ProcessChainStatus
from steepy.agent.environment import Withheld
from steepy.plugins.loaded import PluginSet, builtin_set
from steepy.runtimes.seam import DIRECT, RuntimeSettings

if TYPE_CHECKING:
    from steepy.config import Config


@dataclass
class AgentConfig:
    """The `agent.*` (and `logs.processChains.*`, `runtimes.default`) settings one agent uses;
    each runtime's own settings come checked with the plugins."""

    kill_grace_period_ms: int = 5000  # SIGTERM -> SIGKILL
    output_lines_to_collect: int = 100  # kept for error messages, retryOn and progress
    log_dir: Path | None = Path("logs/processchains")  # None: no per-chain log files
    log_group_by_prefix: int = 0  # first N characters of the chain id as a subdirectory
    log_timestamps: bool = False  # logs.processChains.format steep: Steep's time before each line
    workdir: Path | None = None  # None: the agent's own working directory
    env: dict[str, str] = field(default_factory=dict)  # on top of the agent's environment
    # what the engine reads secrets from: no tool's (steepy.agent.environment)
    withheld: Withheld = field(default_factory=Withheld, repr=False)
    tmp_path: str = "/tmp"  # steep.tmpPath, mounted into every container
    # environments.path: the Python environments of services (absolute; None: beside tmp_path)
    environments_path: str | None = None
    default_runtime: str | None = None  # runs the services of runtime `other' (None: itself)
    # runtimes, adapters and progress estimators, each runtime with its checked settings
    # (default: steepy's own runtimes only, with their defaults)
    plugins: PluginSet = field(default_factory=builtin_set)
    # settings given in code, by runtime and key (Steep's names), over the plugins' (unchecked),
    # e.g. {"docker": {"pull": "never"}, "slurm": {"extraArgs": ["--exclusive"]}}
    runtimes: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def from_config(cls, config: "Config", plugins: PluginSet) -> "AgentConfig":
        """The settings of the (checked) configuration, with the plugins loaded with it
        (`steepy.plugins.pluginset.load_plugins'); tmpPath made absolute."""
        logs = config.logs.process_chains
        return cls(kill_grace_period_ms=config.agent.kill_grace_period,
                   output_lines_to_collect=config.agent.output_lines_to_collect,
                   log_dir=Path(logs.path), log_group_by_prefix=logs.group_by_prefix,
                   log_timestamps=logs.format == "steep",
                   tmp_path=str(Path(config.tmp_path).absolute()),
                   environments_path=str(Path(config.environments.path).absolute()),
                   default_runtime=config.runtimes.default, plugins=plugins,
                   withheld=Withheld.of(config))

    @property
    def environments_dir(self) -> Path:
        """Where the Python environments of services are kept (`environments.path')."""
        if self.environments_path is not None:
            return Path(self.environments_path)
        return Path(self.tmp_path).parent / "envs"

    def runtime_of(self, exe_runtime: str) -> str:
        """The runtime that runs a service of runtime `exe_runtime' (`runtimes.default')."""
        return (self.default_runtime or exe_runtime) if exe_runtime == DIRECT else exe_runtime

    def runtime_settings(self, runtime: str) -> RuntimeSettings:
        """What the runtime `runtime' is told of its settings (`runtimes.<name>')."""
        settings = self.plugins.runtime_settings(runtime)
        given = self.runtimes.get(runtime)
        return settings.replaced(given) if given else settings


@dataclass
class ChainOutcome:
    """How one run of a process chain ended on this agent."""

    status: ProcessChainStatus  # SUCCESS | ERROR | CANCELLED
    results: dict[str, list] = field(default_factory=dict)
    error_message: str | None = None
    attempts: list[AttemptRecord] = field(default_factory=list)
    # the tool of an executable wrote `prune' (extensions 11), or a stopping fallback or the
    # workflow's catch ran (extensions 10): the chain ended there with status SUCCESS, the
    # results of the executables before it and the marker of steepy/model/stopping.py; this
    # says why ("the tool pruned its chain: <reason>")
    pruned: str | None = None
