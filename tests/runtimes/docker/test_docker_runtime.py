"""The `docker` runtime against a real dockerd (`.ci/docker start`, a local busybox image,
no network): runtimeArgs, `runtimes.docker.{pull,env,volumes}`, exit codes and output, a
timeout and a cancel that end the container, and no exited container left behind."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from datetime import datetime, timezone

import pytest

from steepy.agent import AgentConfig, LocalAgent
from steepy.model.attempt import AGENT_LOST, AttemptRecord
from steepy.model.policies import RetryPolicy, TimeoutPolicy
from steepy.model.processchain import Argument, ArgumentVariable, Executable, ProcessChain
from steepy.model.submission import ProcessChainStatus
from tests.components import component, environment
from tests.runtimes.docker.containers import container_gone, containers

pytestmark = pytest.mark.timeout(900)  # a cold start may install dockerd first


@pytest.fixture(scope="module")
def docker() -> dict[str, str]:
    return component("docker")


def _agent(docker: dict, tmp_path, **docker_settings) -> LocalAgent:
    """An agent whose `runtimes.docker' is the CI's client, never pulling, and these keys."""
    given = {"command": docker["docker"], "pull": "never", **docker_settings}
    config = AgentConfig(log_dir=tmp_path / "logs", kill_grace_period_ms=1000,
                         env=environment(docker), tmp_path=str(tmp_path),
                         runtimes={"docker": given})
    return LocalAgent("agent-1", config)


def _exe(docker: dict, script: str, exe_id: str = "e", **policies) -> Executable:
    no_network = Argument("network", ArgumentVariable("network", "none"), "input", "--network")
    command = [Argument(f"a{i}", ArgumentVariable(f"v{i}", v), "input")
               for i, v in enumerate(["sh", "-c", script])]
    return Executable(exe_id, docker["image"], "box", command, runtime="docker",
                      runtime_args=[no_network], **policies)


async def test_output_env_volumes_and_no_container_left(docker, tmp_path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "in.txt").write_text("from the host\n")
    agent = _agent(docker, tmp_path, env=["GREETING=hello"], volumes=[f"{data}:/data:ro"])
    exe = _exe(docker, "echo $GREETING attempt $STEEPY_ATTEMPT; cat /data/in.txt; "
                       f"echo written > {tmp_path}/out.txt", exe_id="ok")
    outcome = await agent.execute(ProcessChain("c", [exe]))
    assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message
    assert outcome.attempts[0].last_lines[-2:] == ["hello attempt 1", "from the host"]
    assert (tmp_path / "out.txt").read_text() == "written\n"  # steep.tmpPath is mounted
    assert container_gone(docker, "steep-ok-")  # --rm: the exited container is removed


async def test_an_exit_code_passes_through_with_the_output(docker, tmp_path) -> None:
    outcome = await _agent(docker, tmp_path).execute(
        ProcessChain("c", [_exe(docker, "echo about to fail; exit 5", exe_id="fails")]))
    assert outcome.status == ProcessChainStatus.ERROR
    assert outcome.attempts[0].exit_code == 5
    assert "exited with code 5" in outcome.error_message
    assert "about to fail" in outcome.error_message
    assert container_gone(docker, "steep-fails-")


async def test_a_timeout_ends_the_container(docker, tmp_path) -> None:
    exe = _exe(docker, "echo started; sleep 60", exe_id="slow",
               max_runtime=TimeoutPolicy(1500, error_on_timeout=True))
    started = time.monotonic()
    outcome = await _agent(docker, tmp_path).execute(ProcessChain("c", [exe]))
    assert outcome.status == ProcessChainStatus.ERROR
    assert "timed out after 1500 ms (maximum runtime)" in outcome.error_message
    assert time.monotonic() - started < 30
    assert container_gone(docker, "steep-slow-")


async def test_a_timeout_ends_a_container_the_service_named(docker, tmp_path) -> None:
    """A service's own `--name' (Steep's way) is the container's name, and the one a timeout
    stops (steepy's own `--name' came after it and won: the user's name was ignored)."""
    exe = _exe(docker, "echo started; sleep 60", exe_id="named",
               max_runtime=TimeoutPolicy(4000, error_on_timeout=True))
    name = f"steepy-test-own-name-{os.getpid()}"
    exe.runtime_args.append(Argument("n", ArgumentVariable("n", name), "input", "--name"))
    task = asyncio.ensure_future(_agent(docker, tmp_path).execute(ProcessChain("c", [exe])))
    end = time.monotonic() + 30
    while not containers(docker, name):
        assert not task.done() and time.monotonic() < end, "no container of the service's name"
        await asyncio.sleep(0.1)
    outcome = await task
    assert outcome.status == ProcessChainStatus.ERROR
    assert "timed out after 4000 ms (maximum runtime)" in outcome.error_message
    assert container_gone(docker, name)


async def test_a_cancel_ends_the_container(docker, tmp_path) -> None:
    agent = _agent(docker, tmp_path)
    task = asyncio.ensure_future(agent.execute(
        ProcessChain("c", [_exe(docker, "echo started; sleep 60", exe_id="cancelled")])))
    end = time.monotonic() + 30
    while not containers(docker, "steep-cancelled-"):
        assert time.monotonic() < end, "the container never started"
        await asyncio.sleep(0.1)
    await asyncio.sleep(0.5)
    agent.cancel("c")
    outcome = await task
    assert outcome.status == ProcessChainStatus.CANCELLED
    assert container_gone(docker, "steep-cancelled-")


async def test_the_example_workflow_runs_in_a_container(docker, tmp_path, monkeypatch) -> None:
    """workflows/docker.yaml through the engine with services/ as they are: their image is
    the one `.ci/docker' made (never pulled)."""
    from steepy.engine.engine import Engine, EngineSettings
    from steepy.documents.loading import read_macros, read_services
    from steepy.model.submission import SubmissionStatus
    from steepy.registry import open_registry
    from tests.conftest import ROOT
    from tests.engine.test_engine import _example, _submit

    monkeypatch.chdir(ROOT)  # the example names its input relative to the project
    services = dict(read_services(str(ROOT / "services")))
    assert services["box-wc"].path == docker["image"]
    registry = open_registry(f"sqlite:///{tmp_path / 'db.sqlite'}")
    sid = _submit(registry, _example("docker.yaml"))
    config = AgentConfig(log_dir=tmp_path / "logs", env=environment(docker),
                         tmp_path=str(tmp_path / "tmp"),
                         runtimes={"docker": {"command": docker["docker"], "pull": "never"}})
    engine = Engine(registry, services, read_macros(str(ROOT / "workflows" / "macros")),
                    EngineSettings(tmp_path=str(tmp_path / "tmp"), out_path=str(tmp_path / "out"),
                                   agents=1, sweep_s=0.5, agent=config))
    await asyncio.wait_for(engine.run(until_submission=sid), 120)
    submission = registry.views.get_submission(sid)
    assert submission.status == SubmissionStatus.SUCCESS, submission.error_message
    counts = open(submission.results["counts"][0]).read().split()
    words = (ROOT / "workflows" / "data" / "words.txt").read_text()
    assert [int(n) for n in counts[:3]] == [len(words.splitlines()), len(words.split()),
                                            len(words.encode())]


@pytest.mark.parametrize("cut", [False, True], ids=["attempt 1", "attempt 2 of run 2"])
async def test_a_leftover_container_of_an_earlier_run_goes_first(docker, tmp_path,
                                                                 cut: bool) -> None:
    """What an engine killed with its executor left: a container labelled with the chain.
    Also when the run goes on at attempt 2 (the check was made only at attempt 1)."""
    env = {**os.environ, **environment(docker)}
    subprocess.run([docker["docker"], "run", "-d", "--network", "none", "--name",
                    "steep-leftover-of-again", "--label", "steepy.chain=again", docker["image"],
                    "sleep", "60"], env=env, check=True, capture_output=True, timeout=60)
    assert containers(docker, "steep-leftover-of-again")
    exe = _exe(docker, "echo fresh", exe_id="again")
    if cut:
        exe.retries = RetryPolicy(max_attempts=3)
    history = [AttemptRecord("again", exe.service_id, 1, datetime.now(timezone.utc),
                             outcome=AGENT_LOST)] if cut else []
    outcome = await _agent(docker, tmp_path).execute(
        ProcessChain("again", [exe]), run_number=2, history=history)
    assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message
    assert outcome.attempts[-1].attempt == (2 if cut else 1)
    assert not containers(docker, "steep-leftover-of-again")
    assert container_gone(docker, "steep-again-")


TOKEN = "tok-4f9a1c2e-never-in-a-container"
PASSWORD = "pw-7d3b-never-in-a-container"


async def test_a_container_gets_what_its_service_declares_and_no_secret(
        docker, tmp_path, monkeypatch) -> None:
    """Issue 24: the service's `environment' and `passEnvironment' reach the container by
    name (`-e NAME', their values in no command line), the attempt's STEEPY_* too; the
    engine's token and database URL do not, nor does anything else of the engine's."""
    monkeypatch.setenv("STEEPY_HTTP_TOKEN", TOKEN)
    monkeypatch.setenv("STEEPY_DB_URL", f"postgresql+psycopg://steepy:{PASSWORD}@db/steepy")
    monkeypatch.setenv("STEEPY_FOR_THE_TOOL", "passed on purpose")
    monkeypatch.setenv("ENGINE_ONLY", "not for containers")
    exe = _exe(docker, "env | sort; exit 3", exe_id="printenv")
    exe.environment = {"GREETING": "hello from the service", "COUNT": "4"}
    exe.pass_environment = ["STEEPY_FOR_THE_TOOL"]
    outcome = await _agent(docker, tmp_path, env=["FROM_SETTINGS=yes"]).execute(
        ProcessChain("c", [exe]), submission_id="s1")
    assert outcome.status == ProcessChainStatus.ERROR and outcome.attempts[0].exit_code == 3
    lines = outcome.attempts[0].last_lines
    assert {"GREETING=hello from the service", "COUNT=4", "FROM_SETTINGS=yes",
            "STEEPY_FOR_THE_TOOL=passed on purpose", "STEEPY_ATTEMPT=1",
            "STEEPY_SUBMISSION_ID=s1", "STEEPY_PROCESS_CHAIN_ID=c"} <= set(lines), lines
    assert not [line for line in lines if line.startswith(("ENGINE_ONLY=", "STEEPY_HTTP",
                                                           "STEEPY_DB", "STEEPY_TREE"))]
    command = outcome.error_message.split("Last output:")[0]
    assert " -e GREETING -e COUNT " in command.replace("-e STEEPY_FOR_THE_TOOL ", "")
    assert "hello from the service" not in command and "passed on purpose" not in command
    log = "\n".join(p.read_text() for p in (tmp_path / "logs").rglob("*") if p.is_file())
    assert "GREETING=hello from the service" in log
    for shown in (log, outcome.error_message):
        assert TOKEN not in shown and PASSWORD not in shown
    assert container_gone(docker, "steep-printenv-")


def test_the_services_variables_are_passed_by_name() -> None:
    from steepy.runtimes.docker import docker_argv, service_env_names

    exe = Executable("e", "img", "svc", environment={"A": "secret value", "B": "2"},
                     pass_environment=["TOKEN_FOR_TOOL", "A"])
    names = service_env_names(exe, ["STEEPY_ATTEMPT"])
    assert names == ["TOKEN_FOR_TOOL", "A", "B", "STEEPY_ATTEMPT"]
    argv = docker_argv(exe, name="n", docker="docker", pull="never", env=["X=1"], volumes=[],
                       tmp_path="/tmp", extra_env_names=names)
    assert argv[argv.index("X=1") - 1:argv.index("n") - 1] == [
        "-e", "X=1", "-e", "TOKEN_FOR_TOOL", "-e", "A", "-e", "B", "-e", "STEEPY_ATTEMPT"]
    assert "secret value" not in " ".join(argv)
