"""A service's software in a SLURM job (issue 27): the Python environment (built on the shared
file system, here the single node's) and the environment modules (Lmod, loaded on the agent's
host and passed on by `srun --export=ALL') are the job's."""

from __future__ import annotations

import sys

import pytest

from steepy.agent import AgentConfig, LocalAgent
from steepy.model.processchain import Argument, ArgumentVariable, Executable, ProcessChain
from steepy.model.software import PythonEnvironment
from steepy.model.submission import ProcessChainStatus
from tests.components import component, environment

VERSION = f"{sys.version_info.major}.{sys.version_info.minor}"


@pytest.fixture(scope="module")
def slurm() -> dict[str, str]:
    return component("slurm")


@pytest.fixture(scope="module")
def lmod() -> dict[str, str]:
    return component("lmod")


async def test_modules_and_python_reach_the_job(slurm, lmod, tmp_path) -> None:
    script = ('echo "job $SLURM_JOB_ID"; hello; '
              'python -c "import idna, sys; print(sys.prefix)"')
    words = [Argument(f"a{i}", ArgumentVariable(f"v{i}", v), "input")
             for i, v in enumerate(["-c", script])]
    exe = Executable("e", "/bin/sh", "tool", words, runtime="slurm", modules=["hello/1.0"],
                     python=PythonEnvironment(("idna",), VERSION))
    envs = tmp_path / "envs"
    config = AgentConfig(log_dir=None, kill_grace_period_ms=1000, tmp_path=str(tmp_path),
                         env={**environment(slurm), **environment(lmod)},
                         environments_path=str(envs),
                         runtimes={"slurm": {"partition": slurm["partition"]}})
    outcome = await LocalAgent("a", config).execute(ProcessChain("software-chain", [exe]))
    assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message
    job, greeting, prefix = outcome.attempts[0].last_lines
    assert job.split()[1].isdigit(), job  # it ran in a job
    assert greeting == "hello from module hello/1.0"
    (built,) = [p for p in envs.iterdir() if p.is_dir()]
    assert prefix == str(built)
