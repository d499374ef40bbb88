"""Command lines for the `other` and `docker` runtimes, output directories and results
(reference section 2)."""

from __future__ import annotations

import os
import re

from steepy.ids import unique_id
from steepy.model.processchain import (
    DATA_TYPE_BOOLEAN,
    DATA_TYPE_DIRECTORY,
    Argument,
    Executable,
    ProcessChain,
)

__all__ = ["argument_list", "other_argv", "docker_argv", "container_name", "pull_policy",
           "output_dirs", "collect_results", "SUPPORTED_RUNTIMES"]

SUPPORTED_RUNTIMES = ("other", "docker")
PULL_POLICIES = ("auto", "always", "missing", "never")
_NAME_CHARS = re.compile(r"[^a-zA-Z0-9_.-]")


def argument_list(arguments: list[Argument]) -> list[str]:
    """Booleans give their label only when true (never the value); others label, then value."""
    out: list[str] = []
    for a in arguments:
        if a.data_type == DATA_TYPE_BOOLEAN:
            if a.variable.value.strip().lower() == "true" and a.label:
                out.append(a.label)
            continue
        if a.label:
            out.append(a.label)
        out.append(a.variable.value)
    return out


def other_argv(exe: Executable) -> list[str]:
    return [exe.path, *argument_list(exe.arguments)]


def container_name(exe: Executable) -> str:
    """A fresh, valid docker container name for one attempt of `exe`."""
    return _NAME_CHARS.sub("-", f"steep-{exe.id}-{exe.service_id}-{unique_id()}")


def pull_policy(image: str, configured: str) -> str:
    """`auto`: an image pinned by digest or by a tag other than `latest` is pulled only when
    missing; anything else always."""
    if configured != "auto":
        return configured
    if "@" in image:
        return "missing"
    last = image.rsplit("/", 1)[-1]
    tag = last.split(":", 1)[1] if ":" in last else "latest"
    return "missing" if tag != "latest" else "always"


def docker_argv(exe: Executable, *, name: str, docker: str, pull: str, env: list[str],
                volumes: list[str], tmp_path: str, extra_env_names: list[str] = ()) -> list[str]:
    """`docker run <runtimeArgs> --pull <p> [-e ...] [-v ...] --name <name>
    -v <tmp>:<tmp> <image> <args>`. `extra_env_names` (the STEEPY_* variables) are passed
    by name, so the container gets the values of the docker client's environment."""
    argv = [docker, "run", *argument_list(exe.runtime_args), "--pull", pull_policy(exe.path, pull)]
    for entry in [*env, *extra_env_names]:
        argv += ["-e", entry]
    for volume in volumes:
        argv += ["-v", volume]
    argv += ["--name", name, "-v", f"{tmp_path}:{tmp_path}", exe.path]
    return argv + argument_list(exe.arguments)


def output_dirs(chain: ProcessChain) -> list[str]:
    """Directories to create before the chain runs: each directory output itself and the
    parent of every other output."""
    dirs: dict[str, None] = {}
    for exe in chain.executables:
        for a in exe.arguments:
            if a.type != "output" or not a.variable.value:
                continue
            path = a.variable.value
            target = path if a.data_type == DATA_TYPE_DIRECTORY else os.path.dirname(path)
            if target:
                dirs[target] = None
    return list(dirs)


def _files_below(directory: str) -> list[str]:
    found: list[str] = []
    for root, _dirs, files in os.walk(directory):
        found.extend(os.path.join(root, f) for f in files)
    return sorted(found)


def collect_results(chain: ProcessChain) -> dict[str, list]:
    """`{output variable id: [value]}`; a directory output lists the files below it."""
    results: dict[str, list] = {}
    for exe in chain.executables:
        for a in exe.arguments:
            if a.type != "output":
                continue
            if a.data_type == DATA_TYPE_DIRECTORY:
                results[a.variable.id] = _files_below(a.variable.value)
            else:
                results[a.variable.id] = [a.variable.value]
    return results
