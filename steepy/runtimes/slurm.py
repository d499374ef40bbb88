"""The `slurm` runtime: each attempt is a SLURM job, run by `srun` in the foreground.

`srun` blocks until the job ends, streams the tool's output as it is written and exits with
the tool's exit code, so the agent treats it like any local process: `maxInactivity',
`maxRuntime' and `deadline' are steepy's own (SLURM's `--time' has minute granularity and is
checked about every 30 s, so it is passed only as a generous upper bound), and a timeout or a
cancel sends SIGTERM to `srun', which cancels the job and every process in it; `scancel' of the
job's name follows as a second means, as `docker kill' does for containers. No status is
polled: one `srun' per attempt knows how its job ends, so thousands of jobs that succeed need
no `squeue' (a failed one is looked up once, below).

Each job is named `steepy-<process chain id>'. A chain runs on one agent at a time, so a job
of that name found when a later run of the chain starts is a leftover of an engine that died
with it (killed with all its processes, the executor too): it is cancelled, and the new attempt
starts only when it is gone. A job that SLURM itself ends (`scancel' from outside, a node
failure) makes `srun' fail, often with SLURM's words in its last lines (`*** STEP 12.0 ON node
CANCELLED AT ...'), but not always: `srun' may see its task end first and say only
`task 0: Terminated'. So after a failed attempt SLURM is asked (`squeue', `scontrol'), and the
error message says how the job ended (`SLURM: job 12 CANCELLED').

Settings (`runtimes.slurm.*', `SlurmSettings'): `command' (srun), `partition', `account',
`qos', `extraArgs' (more srun options), `capabilities' (a chain's required capability -> srun options, e.g.
`gpu: [--partition=gpu, --gres=gpu:1]') and `timeLimit' (the job's `--time' when neither
`maxRuntime' nor `deadline' bounds it). A service's `runtimeArgs' are srun options too
(label and value, e.g. `--cpus-per-task 4', `--mem 8G', `--gres gpu:1', `--time 2:00:00').
"""

from __future__ import annotations

import math
import os
import shutil
import time
from collections.abc import Mapping
from typing import Any

from pydantic import Field

from steepy.config.values import Duration, Strings
from steepy.model.processchain import Executable
from steepy.runtimes.commands import argument_list, read_quietly, run_quietly
from steepy.runtimes.seam import Launch, RuntimeContext, RuntimeSettings

__all__ = ["FINAL_STATES", "SlurmRuntime", "SlurmSettings", "final_state", "job_name",
           "srun_argv"]

TIME_MARGIN_MIN = 2  # minutes added to steepy's own limit: SLURM never ends a job first
LEFTOVER_WAIT_S = 120.0  # how long a new attempt waits for a leftover job to be gone
ENDING_WAIT_S = 15.0  # how long a failed attempt waits for its job to show a final state
FINAL_STATES = {"BOOT_FAIL", "CANCELLED", "COMPLETED", "DEADLINE", "FAILED", "NODE_FAIL",
                "OUT_OF_MEMORY", "PREEMPTED", "TIMEOUT"}


class SlurmSettings(RuntimeSettings):
    """`runtimes.slurm.*': where and how each attempt runs (`srun')."""

    command: str = Field("srun", min_length=1)  # the client
    partition: str | None = None
    account: str | None = None
    qos: str | None = None
    extra_args: Strings = Field(default_factory=list, alias="extraArgs")  # more srun options
    # a chain's required capability -> srun options (e.g. gpu: [--partition=gpu, --gres=gpu:1])
    capabilities: dict[str, Strings] = Field(default_factory=dict)
    # the job's --time when no maxRuntime or deadline bounds it (SLURM's own limit otherwise)
    time_limit: Duration | None = Field(None, alias="timeLimit")


def job_name(env: Mapping[str, str]) -> str:
    return f"steepy-{env.get('STEEPY_PROCESS_CHAIN_ID') or 'chain'}"


def _time_limit(exe: Executable, settings: Mapping[str, Any]) -> str | None:
    """`--time' in minutes: steepy's own limit plus a margin, else `timeLimit'."""
    bounds = [p.timeout for p in (exe.max_runtime, exe.deadline) if p is not None]
    limit_ms = max(bounds) if bounds else settings.get("timeLimit")
    if not limit_ms:
        return None
    return str(math.ceil(limit_ms / 60000) + (TIME_MARGIN_MIN if bounds else 0))


def srun_argv(exe: Executable, name: str, settings: Mapping[str, Any],
              capabilities: tuple[str, ...] = (), workdir: str | None = None) -> list[str]:
    """`srun --quiet --unbuffered --job-name NAME --ntasks 1 --export ALL [placement] [options]
    -- tool`. `--export=ALL': the job gets srun's environment, which is the tool's (the agent
    left steepy's own settings out of it), whatever SLURM_EXPORT_ENV an engine running in a
    job of its own has inherited."""
    argv = [str(settings.get("command") or "srun"), "--quiet", "--unbuffered",
            f"--job-name={name}", "--ntasks=1", "--export=ALL"]
    for key in ("partition", "account", "qos"):
        if settings.get(key):
            argv.append(f"--{key}={settings[key]}")
    mapped = settings.get("capabilities") or {}
    for capability in capabilities:
        argv += list(mapped.get(capability) or [])
    limit = _time_limit(exe, settings)
    if limit is not None:
        argv.append(f"--time={limit}")
    if workdir is not None:
        argv.append(f"--chdir={workdir}")
    argv += list(settings.get("extraArgs") or []) + argument_list(exe.runtime_args)
    return argv + ["--", exe.path, *argument_list(exe.arguments)]


def _client(settings: Mapping[str, Any], program: str) -> str:
    """`scancel'/`squeue' next to the configured `srun' (same installation)."""
    srun = str(settings.get("command") or "srun")
    directory = os.path.dirname(srun) or os.path.dirname(shutil.which(srun) or "")
    return os.path.join(directory, program) if directory else program


async def _jobs_named(squeue: str, name: str, env: dict[str, str], timeout_s: float,
                      ended_too: bool = False) -> list[str]:
    """Ids of the jobs of that name: pending, running or completing (and, `ended_too`,
    those that ended within SLURM's MinJobAge)."""
    out = await read_quietly([squeue, "--noheader", "--format=%i", f"--name={name}",
                              *(["--states=all"] if ended_too else [])], env, timeout_s)
    return (out or "").split()


def _number(job: str) -> int:
    digits = job.split("_")[0].split("+")[0]  # (array and heterogeneous jobs: 12_3, 12+0)
    return int(digits) if digits.isdigit() else -1


async def _job_state(scontrol: str, job: str, env: dict[str, str], timeout_s: float) -> str | None:
    out = await read_quietly([scontrol, "show", "job", "--oneliner", job], env, timeout_s)
    fields = dict(f.split("=", 1) for f in (out or "").split() if "=" in f)
    return fields.get("JobState")


async def final_state(job: str, env: dict[str, str], *, scontrol: str = "scontrol",
                      within_s: float = ENDING_WAIT_S, timeout_s: float = 5.0,
                      every_s: float = 0.2) -> str | None:
    """The job's state (`scontrol show job') once it is final (one of FINAL_STATES), asked
    every `every_s' for up to `within_s' seconds; after that the last state seen, None when
    SLURM knows no such job (or `scontrol' fails).

    A job whose processes have ended is not yet final: it is COMPLETING while slurmd ends
    what is left of it and runs its epilog, and `srun' may return before that is done (so a
    job that succeeded can still read COMPLETING just after its `srun' has ended)."""
    import asyncio  # here: `steepy validate' loads the runtimes, and runs none (issue 31)

    end = time.monotonic() + within_s
    while (state := await _job_state(scontrol, job, env, timeout_s)) is not None \
            and state not in FINAL_STATES and time.monotonic() < end:
        await asyncio.sleep(every_s)
    return state


class SlurmRuntime:
    supported_runtime = "slurm"
    settings_class = SlurmSettings
    # its jobs write their outputs on a node: an NFS client here may see them only later
    outputs_settle_ms = 5000

    def command(self, executable: Executable, context: RuntimeContext) -> Launch:
        settings = context.settings
        name = job_name(context.env)
        argv = srun_argv(executable, name, settings, context.capabilities, context.workdir)
        env = dict(context.env)
        scancel, squeue = _client(settings, "scancel"), _client(settings, "squeue")
        scontrol = _client(settings, "scontrol")
        timeout_s = max(context.kill_grace_period_ms / 1000, 5.0)
        later_run = context.env.get("STEEPY_RUN_NUMBER", "1") not in ("", "1")
        first_of_run = context.first_of_run

        async def cancel_job() -> None:
            await run_quietly([scancel, "--quiet", f"--name={name}"], env, timeout_s)

        async def no_leftover() -> None:
            import asyncio

            if not (later_run and first_of_run):
                return  # an earlier attempt of this run ended before this one is started
            end = time.monotonic() + LEFTOVER_WAIT_S
            while await _jobs_named(squeue, name, env, timeout_s):
                if time.monotonic() > end:
                    raise RuntimeError(f"job `{name}' of an earlier run is still there after "
                                       f"{LEFTOVER_WAIT_S:.0f} s of scancel")
                await cancel_job()
                await asyncio.sleep(0.5)

        async def how_it_ended() -> str | None:
            jobs = await _jobs_named(squeue, name, env, timeout_s, ended_too=True)
            if not jobs:
                return None
            job = max(jobs, key=_number)  # this attempt's: the newest of the chain's name
            state = await final_state(job, env, scontrol=scontrol, timeout_s=timeout_s)
            return None if state is None else f"SLURM: job {job} {state}"

        return Launch(argv, stop=cancel_job, prepare=no_leftover, explain=how_it_ended)
