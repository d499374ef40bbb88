"""Environment modules of services (`modules:' of a service, HPC's Lmod).

Before each attempt, `$LMOD_CMD bash load MODULE...' runs in a bash with the tool's
environment, which evaluates what Lmod prints and hands back the environment that results
(`env -0'). That environment is the tool's: locally, and in a SLURM job, which gets it from
`srun --export=ALL'. So a module's variables are set in the job as `module load' in a job
script would set them; what a module defines for interactive shells only (aliases, shell
functions) does not reach the tool.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from steepy.agent.preparing import last_lines, run_preparing
from steepy.errors import SteepyError

__all__ = ["LMOD_PATHS", "ModulesFailed", "lmod_command", "module_environment"]

# where Lmod's command is when LMOD_CMD is not set (Debian's package, Lmod's own install)
LMOD_PATHS = ("/usr/share/lmod/lmod/libexec/lmod", "/opt/apps/lmod/lmod/libexec/lmod",
              "/usr/local/lmod/lmod/libexec/lmod")
_SCRIPT = 'eval "$("$0" bash load "$@")" || exit 1; exec env -0'
_SHELL_OWN = {"_", "SHLVL", "PWD", "OLDPWD"}  # what bash itself sets


class ModulesFailed(SteepyError):
    """Lmod is missing or could not load the modules; the message says why."""


def lmod_command(env: Mapping[str, str]) -> str:
    """Lmod's command: LMOD_CMD of the tool's environment, else the usual places."""
    given = env.get("LMOD_CMD")
    if given:
        return given
    for path in LMOD_PATHS:
        if os.access(path, os.X_OK):
            return path
    raise ModulesFailed("Lmod is not installed here (LMOD_CMD is not set and none of "
                        + ", ".join(LMOD_PATHS) + " exists)")


async def module_environment(modules: list[str], env: Mapping[str, str]) -> dict[str, str]:
    """`env' with `modules' loaded (in their order); ModulesFailed with Lmod's words."""
    argv = ["bash", "--noprofile", "--norc", "-c", _SCRIPT, lmod_command(env), *modules]
    try:
        code, out, err = await run_preparing(argv, env)
    except OSError as e:
        raise ModulesFailed(f"bash could not start: {e}") from None
    if code != 0:
        raise ModulesFailed(last_lines(err) or f"Lmod failed ({code})")
    loaded = dict(item.split("=", 1) for item in out.decode(errors="replace").split("\0")
                  if "=" in item)
    for name in _SHELL_OWN:
        if name in env:
            loaded[name] = env[name]
        else:
            loaded.pop(name, None)
    return loaded
