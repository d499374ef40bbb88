"""The software a service asks for, provided before each of its attempts (issue 27): its
environment modules loaded into the tool's environment (steepy.agent.modules), then its
Python environment built or found (steepy.agent.pythonenv) and put first on PATH, with
VIRTUAL_ENV set, and the service's `path' taken from the environment's bin directory when it
names a program there (`path: black' with `requirements: [black]').

Every runtime gets the result: its command is made from the executable and environment this
gives back. The runtimes that run on this host (`other') or pass the environment on
(`slurm', with `srun --export=ALL') run the tool with it; for SLURM the environments must be
on a file system the nodes share (`environments.path').
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from steepy.agent.modules import ModulesFailed, module_environment
from steepy.agent.pythonenv import BuildFailed, python_environment
from steepy.errors import SteepyError
from steepy.model.processchain import Executable

__all__ = ["SoftwareMissing", "provide"]


class SoftwareMissing(SteepyError):
    """The modules could not be loaded or the Python environment could not be built: the
    attempt fails with this message (after `Execution of service X failed: ')."""


async def provide(exe: Executable, env: dict[str, str],
                  environments: Path) -> Executable:
    """Put the software `exe' asks for into `env' (changed in place); the executable to run
    (`exe' itself, or a copy whose path is in the Python environment)."""
    if exe.modules:
        try:
            loaded = await module_environment(exe.modules, env)
        except ModulesFailed as e:
            raise SoftwareMissing(f"environment modules {', '.join(exe.modules)} could not "
                                  f"be loaded: {e}") from None
        env.clear()
        env.update(loaded)
    if exe.python is None:
        return exe
    try:
        venv = await python_environment(exe.python, environments, env)
    except (BuildFailed, OSError) as e:  # (OSError: environments.path cannot be written)
        asked = ", ".join(exe.python.requirements) or "no requirements"
        version = f"Python {exe.python.version}" if exe.python.version else "Python"
        raise SoftwareMissing(f"its Python environment ({version}; {asked}) could not be "
                              f"built:\n{e}") from None
    bin_dir = venv / "bin"
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = os.pathsep.join([str(bin_dir), *filter(None, [env.get("PATH")])])
    env.pop("PYTHONHOME", None)
    program = bin_dir / exe.path
    if os.sep not in exe.path and os.access(program, os.X_OK):
        return dataclasses.replace(exe, path=str(program))
    return exe
