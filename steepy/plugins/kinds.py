"""The plugin kinds steepy runs (Steep's, reference section 11) as small typed interfaces.

Every kind is one method. A plugin is an object with that method, a class that has it (made
with no arguments when loaded), or, for brevity, a plain function (it becomes the method).

    runtime                         command(executable, context) -> Launch
    outputAdapter                   adapt(output, chain) -> list            (results of an output)
    inputAdapter                    adapt(input, chain) -> list[Argument]   (arguments it becomes)
    processChainAdapter             adapt(chains, workflow) -> list[ProcessChain]
    processChainConsistencyChecker  check(executables, action, workflow) -> bool
    progressEstimator               estimate(executable, recent_lines) -> float | None
    initializer                     initialize() -> None (may be a coroutine)

Retries and timeouts are not a runtime's business: the agent wraps every attempt a runtime
starts in them, so each runtime gets them for free (as Snakemake's executor plugins get
job scheduling from Snakemake).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Mapping, Protocol, runtime_checkable

from steepy.model import ExecuteAction, Executable, ProcessChain, Workflow
from steepy.model.processchain import Argument

__all__ = ["KINDS", "Kind", "Launch", "RuntimeContext", "Runtime", "OutputAdapter",
           "InputAdapter", "ProcessChainAdapter", "ProcessChainConsistencyChecker",
           "ProgressEstimator", "Initializer"]


@dataclass
class RuntimeContext:
    """What a runtime knows about one attempt besides the executable."""

    tmp_path: str  # steep.tmpPath (absolute): where outputs go; containers mount it
    env: Mapping[str, str]  # the attempt's whole environment (the tool gets exactly this)
    steepy_env: list[str]  # names of the STEEPY_* variables of this attempt (extensions 3)
    settings: Mapping[str, Any]  # `runtimes.<name>.*' of steepy.yaml
    kill_grace_period_ms: int  # agent.killGracePeriod
    workdir: str | None = None  # the tool's working directory (None: the agent's)
    capabilities: tuple[str, ...] = ()  # the chain's required capabilities


@dataclass
class Launch:
    """How to start and stop one attempt: the agent runs `argv` (never through a shell) in a
    session of its own, reads its output, and ends its process tree on a timeout or cancel."""

    argv: list[str]
    # runs beside SIGTERM when a timeout or cancel ends the attempt (e.g. `docker kill NAME')
    stop: Callable[[], Awaitable[None]] | None = None
    # runs after the attempt, however it ended (e.g. remove a job script)
    clean_up: Callable[[], Awaitable[None]] | None = None
    # runs before `argv' starts (e.g. end what a dead engine left of this chain on a cluster)
    prepare: Callable[[], Awaitable[None]] | None = None
    # after `argv' failed: what the runtime knows of how it ended, for the error message
    # (e.g. `SLURM: job 12 CANCELLED'), or None
    explain: Callable[[], Awaitable[str | None]] | None = None


@runtime_checkable
class Runtime(Protocol):
    def command(self, executable: Executable, context: RuntimeContext) -> Launch: ...


@runtime_checkable
class OutputAdapter(Protocol):
    def adapt(self, output: Argument, chain: ProcessChain) -> list: ...


@runtime_checkable
class InputAdapter(Protocol):
    def adapt(self, input: Argument, chain: ProcessChain) -> list[Argument]: ...


@runtime_checkable
class ProcessChainAdapter(Protocol):
    def adapt(self, chains: list[ProcessChain], workflow: Workflow) -> list[ProcessChain]: ...


@runtime_checkable
class ProcessChainConsistencyChecker(Protocol):
    def check(self, executables: list[Executable], action: ExecuteAction,
              workflow: Workflow) -> bool: ...


@runtime_checkable
class ProgressEstimator(Protocol):
    def estimate(self, executable: Executable, recent_lines: list[str]) -> float | None: ...


@runtime_checkable
class Initializer(Protocol):
    def initialize(self) -> None | Awaitable[None]: ...


@dataclass(frozen=True)
class Kind:
    """One plugin type: Steep's name, the entry-point group, its method and what it selects by."""

    type: str  # Steep's name, e.g. `outputAdapter'
    words: str  # e.g. `output adapter'
    group: str  # entry-point group, e.g. `steepy.outputAdapters'
    interface: type
    method: str
    parameters: tuple[str, ...]
    # the descriptor key this kind is selected by (Steep's name) and the attribute of the
    # object that may give it; None: the kind applies everywhere
    selector: str | None = None
    attribute: str | None = None
    depends: bool = False  # Steep's `dependsOn' orders plugins of this kind


KINDS: dict[str, Kind] = {k.type: k for k in (
    Kind("runtime", "runtime", "steepy.runtimes", Runtime, "command",
         ("executable", "context"), "supportedRuntime", "supported_runtime"),
    Kind("outputAdapter", "output adapter", "steepy.outputAdapters", OutputAdapter, "adapt",
         ("output", "chain"), "supportedDataType", "supported_data_type"),
    Kind("inputAdapter", "input adapter", "steepy.inputAdapters", InputAdapter, "adapt",
         ("input", "chain"), "supportedDataType", "supported_data_type"),
    Kind("processChainAdapter", "process chain adapter", "steepy.processChainAdapters",
         ProcessChainAdapter, "adapt", ("chains", "workflow"), depends=True),
    Kind("processChainConsistencyChecker", "process chain consistency checker",
         "steepy.processChainConsistencyCheckers", ProcessChainConsistencyChecker, "check",
         ("executables", "action", "workflow"), depends=True),
    Kind("progressEstimator", "progress estimator", "steepy.progressEstimators",
         ProgressEstimator, "estimate", ("executable", "recent_lines"), "supportedServiceIds",
         "supported_service_ids"),
    Kind("initializer", "initializer", "steepy.initializers", Initializer, "initialize", (),
         depends=True),
)}
