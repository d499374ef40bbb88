"""Runtimes: how one attempt of an executable is started and stopped (reference section 2,
`runtime` of a service). `other` runs the executable's path directly, `docker` in a
container, `slurm` as a SLURM job; more come as plugins (entry-point group `steepy.runtimes`).

A runtime only says which command line to run and how to stop it, and declares its settings
(`runtimes.<name>' of steepy.yaml) as a class; the agent runs it under the executable's retry
and timeout policies, reads its output and ends its process tree. What a runtime is given and
gives back is `seam.py` (`Runtime`, `RuntimeContext`, `RuntimeSettings`, `Launch`).
"""

from steepy.runtimes.commands import argument_list, run_quietly
from steepy.runtimes.docker import DockerRuntime
from steepy.runtimes.other import OtherRuntime
from steepy.runtimes.seam import (DIRECT, Launch, Runtime, RuntimeContext, RuntimeSettings,
                                  settings_class)
from steepy.runtimes.slurm import SlurmRuntime

BUILTIN = {r.supported_runtime: r for r in (OtherRuntime(), DockerRuntime(), SlurmRuntime())}

# Steep's runtimes that steepy lacks, and what `steepy validate' says instead of "cannot run"
STEEP_ONLY = {"kubernetes": "which steepy does not support yet (Steep does). Run it with "
                            "`docker' or `slurm', or install a runtime plugin for Kubernetes."}

__all__ = ["BUILTIN", "DIRECT", "DockerRuntime", "Launch", "OtherRuntime",
           "Runtime", "RuntimeContext", "RuntimeSettings", "STEEP_ONLY", "SlurmRuntime",
           "argument_list", "run_quietly", "settings_class"]
