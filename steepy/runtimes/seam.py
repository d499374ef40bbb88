"""The seam between steepy and a runtime (reference section 11, `runtime' plugins).

A runtime is one class with one method, `command(executable, context) -> Launch': which
command line starts an attempt and how to stop it. If it has settings, its `settings_class'
(a subclass of `RuntimeSettings') declares them: the class's fields are the keys of
`runtimes.<name>' in steepy.yaml (their aliases Steep's names), with types, defaults and
checks. steepy checks that section with the configuration (a bad value or an unknown key is a
problem at its file:line:column) and hands the checked object to every attempt as
`context.settings'. A new runtime is one module and an entry point in the group
`steepy.runtimes' (as a Snakemake executor plugin is one module with its `ExecutorSettings').

Retries and timeouts are not a runtime's business: the agent wraps every attempt a runtime
starts in them, so each runtime gets them for free.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Mapping, Protocol, runtime_checkable

from steepy.config.model import Section
from steepy.model.common import DIRECT_RUNTIME
from steepy.model.processchain import Executable

__all__ = ["DIRECT", "Launch", "Runtime", "RuntimeContext", "RuntimeSettings", "settings_class"]

DIRECT = DIRECT_RUNTIME  # the runtime of a service that names none (steepy.model.common)


class RuntimeSettings(Section):
    """`runtimes.<name>' of steepy.yaml for one runtime; a runtime's subclass declares the
    keys. Read by attribute (`settings.partition') or by key (`settings["extraArgs"]',
    `settings.get("pull")'). This class itself has no keys: a runtime that declares no
    settings class takes none."""


@dataclass
class RuntimeContext:
    """What a runtime knows about one attempt besides the executable."""

    tmp_path: str  # steep.tmpPath (absolute): where outputs go; containers mount it
    env: Mapping[str, str]  # the attempt's whole environment (the tool gets exactly this)
    steepy_env: list[str]  # names of the STEEPY_* variables of this attempt (extensions 3)
    # `runtimes.<name>' of steepy.yaml, checked: an instance of the runtime's settings class
    # (a plain mapping by Steep's key names where a caller made settings by hand)
    settings: RuntimeSettings | Mapping[str, Any]
    kill_grace_period_ms: int  # agent.killGracePeriod
    workdir: str | None = None  # the tool's working directory (None: the agent's)
    capabilities: tuple[str, ...] = ()  # the chain's required capabilities
    # no attempt of this run of the chain was started before this one: what an earlier run
    # left (a dead engine's job or container) is ended first then. Not `STEEPY_ATTEMPT' ==
    # 1: a retry policy's attempts count on across runs (run 2 may begin at attempt 2)
    first_of_run: bool = True


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


def settings_class(runtime: Any) -> type[RuntimeSettings]:
    """The settings class `runtime' declares (its `settings_class'), else one without keys;
    ValueError for one that is no RuntimeSettings."""
    declared = getattr(runtime, "settings_class", None)
    if declared is None:
        return RuntimeSettings
    if not (isinstance(declared, type) and issubclass(declared, RuntimeSettings)):
        raise ValueError(f"its `settings_class' must be a subclass of "
                         f"steepy.runtimes.RuntimeSettings (the keys of `runtimes.<name>'), "
                         f"got {declared!r}")
    return declared
