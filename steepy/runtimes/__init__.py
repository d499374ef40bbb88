"""Runtimes: how one attempt of an executable is started and stopped (reference section 2,
`runtime` of a service). `other` runs the executable's path directly, `docker` in a
container, `slurm` as a SLURM job; more come as plugins (steepy.plugins, entry-point group `steepy.runtimes`).

A runtime only says which command line to run and how to stop it; the agent runs it under
the executable's retry and timeout policies, reads its output and ends its process tree.
"""

from steepy.runtimes.commands import argument_list, run_quietly
from steepy.runtimes.docker import DockerRuntime
from steepy.runtimes.other import OtherRuntime
from steepy.runtimes.slurm import SlurmRuntime

BUILTIN = {"other": OtherRuntime(), "docker": DockerRuntime(), "slurm": SlurmRuntime()}

__all__ = ["BUILTIN", "DockerRuntime", "OtherRuntime", "SlurmRuntime", "argument_list",
           "run_quietly"]
