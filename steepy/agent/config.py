"""Settings of a local agent and what it hands back after running a process chain."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

# one attempt's record is a model the registry shares (extensions section 4)
from steepy.model.attempt import (CANCELLED, FAILED, REQUEUED, SKIPPED, SUCCESS,  # noqa: F401
                                  TIMEOUT, AttemptRecord)
from steepy.model.submission import ProcessChainStatus
from steepy.plugins.pluginset import PluginSet, builtin_set, load_plugins, use

if TYPE_CHECKING:
    from steepy.config import Config


@dataclass
class AgentConfig:
    """The `agent.*` (and `runtimes.docker.*`, `logs.processChains.*`) settings one agent uses."""

    kill_grace_period_ms: int = 5000  # SIGTERM -> SIGKILL
    output_lines_to_collect: int = 100  # kept for error messages, retryOn and progress
    log_dir: Path | None = Path("logs/processchains")  # None: no per-chain log files
    log_group_by_prefix: int = 0  # first N characters of the chain id as a subdirectory
    workdir: Path | None = None  # None: the agent's own working directory
    env: dict[str, str] = field(default_factory=dict)  # on top of the agent's environment
    docker_env: list[str] = field(default_factory=list)  # `-e` entries of docker run
    docker_volumes: list[str] = field(default_factory=list)  # `-v` entries of docker run
    docker_pull: str = "auto"  # auto | always | missing | never
    docker_command: str = "docker"  # the client (`runtimes.docker.command': docker, podman)
    tmp_path: str = "/tmp"  # steep.tmpPath, mounted into every container
    slurm: dict[str, Any] = field(default_factory=dict)  # `runtimes.slurm.*' by Steep's names
    default_runtime: str = "other"  # runs the services whose runtime is `other
    # runtimes, adapters and progress estimators (default: steepy's own runtimes only)
    plugins: PluginSet = field(default_factory=builtin_set)

    @classmethod
    def from_config(cls, config: "Config") -> "AgentConfig":
        """The settings of the (checked) configuration; tmpPath made absolute. Loads the
        plugins (a PluginError when one cannot be used) and makes them the process's."""
        docker = config.runtimes.docker
        logs = config.logs.process_chains
        plugins = load_plugins(config)
        use(plugins)
        return cls(kill_grace_period_ms=config.agent.kill_grace_period,
                   output_lines_to_collect=config.agent.output_lines_to_collect,
                   log_dir=Path(logs.path), log_group_by_prefix=logs.group_by_prefix,
                   docker_env=list(docker.env), docker_volumes=list(docker.volumes),
                   docker_pull=docker.pull, docker_command=docker.command,
                   tmp_path=str(Path(config.tmp_path).absolute()),
                   slurm=config.runtimes.slurm.model_dump(by_alias=True),
                   default_runtime=config.runtimes.default, plugins=plugins)

    def runtime_of(self, exe_runtime: str) -> str:
        """The runtime that runs a service of runtime `exe_runtime' (`runtimes.default')."""
        return self.default_runtime if exe_runtime == "other" else exe_runtime

    def runtime_settings(self, runtime: str) -> dict[str, Any]:
        """What the runtime `runtime' is told of its settings (`runtimes.<name>.*')."""
        if runtime == "docker":
            return {"command": self.docker_command, "pull": self.docker_pull,
                    "env": list(self.docker_env), "volumes": list(self.docker_volumes)}
        if runtime == "slurm":
            return dict(self.slurm)
        return self.plugins.runtime_settings(runtime)


@dataclass
class ChainOutcome:
    """How one run of a process chain ended on this agent."""

    status: ProcessChainStatus  # SUCCESS | ERROR | CANCELLED
    results: dict[str, list] = field(default_factory=dict)
    error_message: str | None = None
    attempts: list[AttemptRecord] = field(default_factory=list)
