"""The `docker` runtime: `docker run` of the executable's image; a timeout or cancel also
`docker kill`s the container (the client's SIGTERM alone may leave it running).

Settings (`runtimes.docker.*`, `DockerSettings`): `pull` (auto | always | missing | never),
`env` and `volumes` (lists of `-e`/`-v` entries), and `command`, the client (`podman' works as
a drop-in).
"""

from __future__ import annotations

import posixpath
import re
from typing import Literal

from pydantic import Field

from steepy.config.values import Strings
from steepy.model.ids import unique_id
from steepy.model.processchain import DATA_TYPE_DIRECTORY, Executable
from steepy.runtimes.commands import argument_list, run_quietly
from steepy.runtimes.seam import Launch, RuntimeContext, RuntimeSettings

__all__ = ["DockerRuntime", "DockerSettings", "container_name", "docker_argv", "given_option",
           "pull_policy", "PULL_POLICIES", "service_env_names"]

PULL_POLICIES = ("auto", "always", "missing", "never")


class DockerSettings(RuntimeSettings):
    """`runtimes.docker.*'."""

    command: str = Field("docker", min_length=1)  # the client: docker, or podman as a drop-in
    pull: Literal[PULL_POLICIES] = "auto"  # type: ignore[valid-type]
    env: Strings = Field(default_factory=list)  # `-e' entries of docker run
    volumes: Strings = Field(default_factory=list)  # `-v' entries of docker run

_NAME_CHARS = re.compile(r"[^a-zA-Z0-9_.-]")


def given_option(exe: Executable, option: str) -> str | None:
    """The value the service's `runtimeArgs' give `option' (`--name x' or `--name=x'; of
    several, the last, as docker reads them), or None; an empty one is none (steepy's own then
    comes after it, and docker takes the last: container_name and docker_argv agree)."""
    found = None
    for a in exe.runtime_args:
        label = (a.label or "").strip()
        if label == option:
            found = a.variable.value
        elif label.startswith(option + "="):
            found = label[len(option) + 1:]
    return found or None


def container_name(exe: Executable) -> str:
    """The container's name for one attempt of `exe`: the service's own `--name' (as in Steep;
    one container of that name at a time), else a fresh one. Timeouts and cancellations
    stop the container by this name."""
    given = given_option(exe, "--name")
    if given is not None:
        return given
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


CHAIN_LABEL = "steepy.chain"  # every container carries its process chain's id


def docker_argv(exe: Executable, *, name: str, docker: str, pull: str, env: list[str],
                volumes: list[str], tmp_path: str, extra_env_names: list[str] = (),
                chain_id: str | None = None) -> list[str]:
    """`docker run --rm <runtimeArgs> --pull <p> [-e ...] [-v ...] --name <name>
    -v <tmp>:<tmp> [-v <output dir>:<output dir> ...] <image> <args>`. `extra_env_names` (the
    service's variables and the STEEPY_* ones, `service_env_names') are passed by name, so the
    container gets the values of the docker client's environment. `--rm`:
    an exited container is removed (its output is in the chain's log already). A `--pull' or
    `--name' among the runtime arguments is the service's own, as in Steep: none is added
    (the name is `name', container_name's)."""
    argv = [docker, "run", "--rm", *argument_list(exe.runtime_args)]
    if given_option(exe, "--pull") is None:
        argv += ["--pull", pull_policy(exe.path, pull)]
    for entry in [*env, *extra_env_names]:
        argv += ["-e", entry]
    for volume in volumes:
        argv += ["-v", volume]
    if chain_id:
        argv += ["--label", f"{CHAIN_LABEL}={chain_id}"]
    if given_option(exe, "--name") is None:
        argv += ["--name", name]
    argv += ["-v", f"{tmp_path}:{tmp_path}"]
    for directory in output_directories(exe, tmp_path):  # e.g. results stored in steep.outPath
        argv += ["-v", f"{directory}:{directory}"]
    return argv + [exe.path] + argument_list(exe.arguments)


def output_directories(exe: Executable, tmp_path: str) -> list[str]:
    """The directories the tool writes its outputs to that lie outside `tmp_path` (which
    every container gets anyway): they are mounted at the same path, too."""
    found: dict[str, None] = {}
    inside = tmp_path.rstrip("/") + "/"
    for a in exe.arguments:
        if a.type != "output" or not posixpath.isabs(a.variable.value):
            continue
        directory = (a.variable.value if a.data_type == DATA_TYPE_DIRECTORY
                     else posixpath.dirname(a.variable.value))
        if not (directory + "/").startswith(inside):
            found[directory] = None
    return list(found)


def service_env_names(exe: Executable, steepy_env=()) -> list[str]:
    """The variables a container gets from the client, by name: the service's
    `passEnvironment' and `environment' (whose values the agent put into the client's
    environment; by name, their values appear in no command line), then the attempt's
    STEEPY_* ones. The engine's other variables stay outside the container."""
    return list(dict.fromkeys([*exe.pass_environment, *exe.environment, *steepy_env]))


class DockerRuntime:
    supported_runtime = "docker"
    settings_class = DockerSettings

    def command(self, executable: Executable, context: RuntimeContext) -> Launch:
        settings = context.settings
        docker = str(settings.get("command") or "docker")
        name = container_name(executable)
        argv = docker_argv(executable, name=name, docker=docker,
                           pull=str(settings.get("pull") or "auto"),
                           env=list(settings.get("env") or []),
                           volumes=list(settings.get("volumes") or []),
                           tmp_path=context.tmp_path,
                           extra_env_names=service_env_names(executable, context.steepy_env),
                           chain_id=context.env.get("STEEPY_PROCESS_CHAIN_ID"))
        kill_env = dict(context.env)
        timeout_s = max(context.kill_grace_period_ms / 1000, 1.0)
        stopped = [False]

        async def kill_container() -> None:
            stopped[0] = True
            await run_quietly([docker, "kill", name], kill_env, timeout_s)

        async def remove_container() -> None:
            # a client killed before the container was up may leave one that `kill' missed
            if stopped[0]:
                await run_quietly([docker, "rm", "-f", name], kill_env, timeout_s)

        chain = context.env.get("STEEPY_PROCESS_CHAIN_ID")
        later_run = context.env.get("STEEPY_RUN_NUMBER", "1") not in ("", "1")
        first_of_run = context.first_of_run

        async def no_leftover() -> None:
            """A container of this chain at the start of a later run was left by an engine
            that died with its executor (a client killed by SIGKILL leaves its container
            running): it goes before the chain's tool runs again."""
            if chain and later_run and first_of_run:
                for leftover in await _containers_of(docker, chain, kill_env):
                    await run_quietly([docker, "rm", "-f", leftover], kill_env, timeout_s * 10)

        return Launch(argv, stop=kill_container, clean_up=remove_container,
                      prepare=no_leftover)


async def _containers_of(docker: str, chain: str, env: dict[str, str]) -> list[str]:
    import asyncio

    proc = await asyncio.create_subprocess_exec(
        docker, "ps", "-aq", "--filter", f"label={CHAIN_LABEL}={chain}", env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    out, _ = await proc.communicate()
    return out.decode().split() if proc.returncode == 0 else []
