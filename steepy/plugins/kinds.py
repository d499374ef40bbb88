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
    retryPolicy                     next(elapsed_ms, attempts, failure) -> int | None
                                    (steepy's: the pause in ms before the next attempt of an
                                    executable whose policy names it, `plugin: NAME'; None:
                                    give up)

A runtime's side of the seam (`Runtime', `RuntimeContext', `Launch', and `RuntimeSettings'
for its `runtimes.<name>' keys) lives with the runtimes, `steepy.runtimes.seam'; it is
re-exported here and from `steepy.plugins' for plugin authors.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Awaitable, Protocol, runtime_checkable

from steepy.model import ExecuteAction, Executable, ProcessChain, Workflow
from steepy.model.processchain import Argument
from steepy.runtimes.seam import Launch, Runtime, RuntimeContext, RuntimeSettings

__all__ = ["KINDS", "Kind", "Launch", "RuntimeContext", "Runtime", "RuntimeSettings",
           "OutputAdapter", "InputAdapter", "ProcessChainAdapter",
           "ProcessChainConsistencyChecker", "ProgressEstimator", "Initializer",
           "RetryFailure", "RetryPolicyPlugin"]


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
class RetryFailure:
    """How the attempt a `retryPolicy' plugin decides after failed: its exit code (None when
    it was killed or never started), the timeout that ended it (`maximum runtime',
    `maximum inactivity' or None), its last output lines and the error message."""

    exit_code: int | None
    timeout_kind: str | None
    last_lines: tuple[str, ...]
    message: str = ""


@runtime_checkable
class RetryPolicyPlugin(Protocol):
    def next(self, elapsed_ms: int, attempts: int, failure: RetryFailure) -> int | None: ...


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
    Kind("retryPolicy", "retry policy", "steepy.retryPolicies", RetryPolicyPlugin, "next",
         ("elapsed_ms", "attempts", "failure")),
)}
