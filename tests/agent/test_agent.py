"""The agent's API: cancellation at any moment, events, progress, docker command lines."""

from __future__ import annotations

import asyncio
import os
import random
import threading
import time

import pytest

from steepy.agent import AgentConfig, LocalAgent
from steepy.runtimes.docker import container_name, docker_argv, pull_policy
from steepy.errors import SteepyError
from steepy.model.policies import RetryPolicy
from steepy.model.processchain import Argument, ArgumentVariable, Executable, ProcessChain
from steepy.model.submission import ProcessChainStatus
from tests.agent.harness import inputs, tool_executable


def agent(tmp_path, **kw) -> LocalAgent:
    settings = {"log_dir": tmp_path / "logs", "kill_grace_period_ms": 2000}
    settings.update(kw.pop("settings", {}))
    return LocalAgent("agent-1", AgentConfig(**settings), **kw)


def sleeper(seconds: float = 30, **policies) -> Executable:
    return Executable("e", "sleep", "sleep", inputs([str(seconds)]), **policies)


async def wait_until(condition, timeout: float = 15.0) -> None:
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "condition not reached"
        await asyncio.sleep(0.01)


# -- cancellation --------------------------------------------------------------------------------


@pytest.mark.process
async def test_cancel_before_start(tmp_path):
    a = agent(tmp_path)
    a.cancel("chain-1")
    exe, counter = tool_executable("e", "s", ["return"], tmp_path)
    outcome = await a.execute(ProcessChain("chain-1", [exe]))
    assert outcome.status == ProcessChainStatus.CANCELLED
    assert not counter.exists() and outcome.attempts == []
    # the request was used up: the next run of the chain runs
    assert (await a.execute(ProcessChain("chain-1", [exe]))).status == ProcessChainStatus.SUCCESS


@pytest.mark.process
async def test_cancel_without_id_while_idle_does_nothing(tmp_path):
    a = agent(tmp_path)
    a.cancel()
    exe, _ = tool_executable("e", "s", ["return"], tmp_path)
    assert (await a.execute(ProcessChain("c", [exe]))).status == ProcessChainStatus.SUCCESS


@pytest.mark.process
async def test_cancel_of_another_chain_leaves_the_running_one_alone(tmp_path):
    a = agent(tmp_path)
    exe, _ = tool_executable("e", "s", [{"block_ms": 300}], tmp_path)
    task = asyncio.ensure_future(a.execute(ProcessChain("mine", [exe])))
    await wait_until(lambda: a.busy)
    a.cancel("other")
    assert (await task).status == ProcessChainStatus.SUCCESS


@pytest.mark.process
async def test_cancel_from_a_thread_within_the_grace_period(tmp_path):
    a = agent(tmp_path, settings={"kill_grace_period_ms": 300})
    # "ready" once SIGTERM is ignored: the cancellation must wait out the grace period
    exe, _ = tool_executable("e", "s", [{"ignore_term": True, "print": ["ready"],
                                         "block_ms": 20000}], tmp_path)
    task = asyncio.ensure_future(a.execute(ProcessChain("c", [exe])))
    log = tmp_path / "logs" / "c.log"
    await wait_until(lambda: log.exists() and "ready" in log.read_text())
    start = time.monotonic()
    threading.Thread(target=a.cancel, args=("c",)).start()
    outcome = await task
    assert outcome.status == ProcessChainStatus.CANCELLED
    assert outcome.attempts[0].outcome == "CANCELLED" and outcome.attempts[0].signal == 9
    # the grace period, then SIGKILL; far from the tool's 20 s (generous for a loaded machine)
    assert 0.3 <= time.monotonic() - start < 0.3 + 4


@pytest.mark.process
async def test_cancel_during_a_retry_pause(tmp_path):
    events = []
    a = agent(tmp_path, on_event=lambda kind, data: events.append(kind))
    exe, counter = tool_executable("e", "s", [{"fail": {"exit_code": 1}}], tmp_path,
                                   retries=RetryPolicy(max_attempts=3, delay=60000))
    task = asyncio.ensure_future(a.execute(ProcessChain("c", [exe])))
    await wait_until(lambda: "chain.retryScheduled" in events)  # the 60 s pause has begun
    start = time.monotonic()
    a.cancel()
    outcome = await task
    assert outcome.status == ProcessChainStatus.CANCELLED
    assert counter.read_text() == "1"
    assert [r.outcome for r in outcome.attempts] == ["FAILED"]
    assert time.monotonic() - start < 5  # the pause is cut short, not waited out


@pytest.mark.process
async def test_cancelling_the_task_kills_the_tool(tmp_path):
    a = agent(tmp_path)
    pid_file = tmp_path / "g.pid"
    exe, _ = tool_executable("e", "s", [{"grandchild": str(pid_file), "block_ms": 20000}], tmp_path)
    task = asyncio.ensure_future(a.execute(ProcessChain("c", [exe])))
    await wait_until(lambda: pid_file.exists() and pid_file.read_text())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not a.busy
    from tests.agent.test_processes import running
    await wait_until(lambda: not running(int(pid_file.read_text())))


@pytest.mark.process
async def test_one_chain_at_a_time(tmp_path):
    a = agent(tmp_path)
    task = asyncio.ensure_future(a.execute(ProcessChain("c1", [sleeper(0.3)])))
    await wait_until(lambda: a.busy)
    assert a.current_chain_id == "c1"
    with pytest.raises(SteepyError, match="busy"):
        await a.execute(ProcessChain("c2", [sleeper(0.1)]))
    assert (await task).status == ProcessChainStatus.SUCCESS
    assert not a.busy and a.current_chain_id is None and a.progress is None


# -- events and progress -------------------------------------------------------------------------


@pytest.mark.process
async def test_events_as_they_happen(tmp_path):
    events = []
    a = agent(tmp_path, on_event=lambda kind, data: events.append((kind, data)),
              rng=random.Random(1))
    exe, _ = tool_executable("e", "flaky", [{"raise": "oops"}, "return"], tmp_path,
                             retries=RetryPolicy(max_attempts=2, delay=50))
    outcome = await a.execute(ProcessChain("c", [exe, sleeper(0)]))
    assert outcome.status == ProcessChainStatus.SUCCESS
    kinds = [k for k, _ in events]
    assert kinds == ["chain.attemptFailed", "chain.retryScheduled", "chain.progress",
                     "chain.progress"]
    failed, scheduled = events[0][1], events[1][1]
    assert failed["serviceId"] == "flaky" and failed["exitCode"] == 1 and failed["attempt"] == 1
    assert failed["message"].endswith("Last output:\noops")
    assert scheduled["attempt"] == 2 and scheduled["delayMs"] == 50
    assert [d["progress"] for k, d in events if k == "chain.progress"] == [0.5, 1.0]
    first = outcome.attempts[0]
    assert first.delay_ms == 50 and first.delay_rule.startswith("exponential 50ms")
    assert first.to_json()["outcome"] == "FAILED"


@pytest.mark.process
async def test_a_failing_event_callback_does_not_break_the_chain(tmp_path):
    def boom(kind, data):
        raise RuntimeError("listener broke")

    a = agent(tmp_path, on_event=boom)
    assert (await a.execute(ProcessChain("c", [sleeper(0)]))).status == ProcessChainStatus.SUCCESS


@pytest.mark.process
async def test_progress_while_running(tmp_path):
    def estimate(exe, lines):
        return int(lines[-1]) / 10

    a = agent(tmp_path, progress_estimator=estimate)
    exe, _ = tool_executable("e", "s", [{"lines": {"values": ["5"], "then_block_ms": 30000}}],
                             tmp_path)  # blocks until cancelled
    second = Executable("f", "true", "t")
    task = asyncio.ensure_future(a.execute(ProcessChain("c", [exe, second])))
    await wait_until(lambda: a.progress == 0.25)  # (0 + 5/10) / 2
    assert a.handle_message("c", {"action": "getProgress"}) == 0.25
    assert a.handle_message("other", {"action": "getProgress"}) is None
    a.handle_message("c", {"action": "cancel"})
    assert (await task).status == ProcessChainStatus.CANCELLED


# -- docker --------------------------------------------------------------------------------------


def test_docker_command_line():
    exe = Executable(
        "ex$1", "example/image:1.2", "svc",
        [Argument("i", ArgumentVariable("v1", "/tmp/in"), "input", label="-i"),
         Argument("f", ArgumentVariable("v2", "true"), "input", label="--fast", data_type="boolean"),
         Argument("o", ArgumentVariable("v3", "/tmp/out"), "output")],
        runtime="docker",
        runtime_args=[Argument("r1", ArgumentVariable("mem", "1g"), "input", label="--memory"),
                      Argument("r2", ArgumentVariable("rm", "true"), "input", label="--rm",
                               data_type="boolean")])
    argv = docker_argv(exe, name="steep-x", docker="docker", pull="auto", env=["A=1", "B"],
                       volumes=["/data:/data"], tmp_path="/tmp/steep",
                       extra_env_names=["STEEPY_ATTEMPT"])
    assert argv == ["docker", "run", "--rm", "--memory", "1g", "--rm", "--pull", "missing",
                    "-e", "A=1", "-e", "B", "-e", "STEEPY_ATTEMPT", "-v", "/data:/data",
                    "--name", "steep-x", "-v", "/tmp/steep:/tmp/steep",
                    "-v", "/tmp:/tmp",  # where the output goes, outside steep.tmpPath
                    "example/image:1.2", "-i", "/tmp/in", "--fast", "/tmp/out"]


@pytest.mark.parametrize("pull, name", [("--pull", "--name"), ("--pull=", "--name=")],
                         ids=["label-value", "label=value"])
def test_the_services_own_pull_and_name_are_kept_not_overridden(pull, name):
    """As in Steep: a service's `--pull' and `--name' runtime arguments are the only ones (docker
    takes the last of a repeated option: steepy's own came after them and won, so an image
    was pulled offline and the user's name ignored); the container is stopped by that name."""
    def runtime_arg(label: str, value: str) -> Argument:
        if label.endswith("="):  # a boolean argument that is true: its label alone
            return Argument(label, ArgumentVariable(label, "true"), "input", label=label + value,
                            data_type="boolean")
        return Argument(label, ArgumentVariable(label, value), "input", label=label)
    exe = Executable("a", "alpine", "dk", runtime="docker",
                     runtime_args=[runtime_arg(pull, "never"), runtime_arg(name, "mine")])
    assert container_name(exe) == "mine"
    argv = docker_argv(exe, name=container_name(exe), docker="docker", pull="always", env=[],
                       volumes=[], tmp_path="/tmp/steep")
    options = argv[:argv.index("alpine")]
    assert sum(o == "--pull" or o.startswith("--pull=") for o in options) == 1
    assert sum(o == "--name" or o.startswith("--name=") for o in options) == 1
    assert ("--pull" in options and options[options.index("--pull") + 1] == "never"
            ) or "--pull=never" in options
    assert ("--name" in options and options[options.index("--name") + 1] == "mine"
            ) or "--name=mine" in options


def test_an_empty_own_name_is_none_and_the_container_is_named_as_it_is_stopped():
    exe = Executable("a", "alpine", "dk", runtime="docker",
                     runtime_args=[Argument("n", ArgumentVariable("n", ""), "input", label="--name")])
    name = container_name(exe)
    assert name.startswith("steep-a-dk-")
    argv = docker_argv(exe, name=name, docker="docker", pull="always", env=[], volumes=[],
                       tmp_path="/tmp/steep")
    options = argv[:argv.index("alpine")]
    last = len(options) - 1 - options[::-1].index("--name")
    assert options[last + 1] == name  # (docker takes the last --name: the one stopped)


@pytest.mark.parametrize("image, configured, expected", [
    ("alpine", "auto", "always"),
    ("alpine:latest", "auto", "always"),
    ("alpine:3.19", "auto", "missing"),
    ("registry:5000/team/tool", "auto", "always"),
    ("registry:5000/team/tool:2", "auto", "missing"),
    ("alpine@sha256:abc", "auto", "missing"),
    ("alpine:3.19", "always", "always"),
    ("alpine", "never", "never"),
])
def test_pull_policy(image, configured, expected):
    assert pull_policy(image, configured) == expected


def test_container_names_are_valid_and_fresh():
    exe = Executable("my action$2$1", "alpine", "svc/x")
    a, b = container_name(exe), container_name(exe)
    assert a != b and a.startswith("steep-my-action-2-1-svc-x-")


def test_the_environment_a_tool_gets_follows_changes_of_this_process(monkeypatch) -> None:
    """Tools get this process's environment as it is now (a decoded copy is kept only
    while nothing changes), and each call gets a copy of its own."""
    from steepy.agent.local import environment

    first = environment()
    assert first == dict(os.environ)
    first["STEEPY_TEST_SCRATCH"] = "mine"
    assert "STEEPY_TEST_SCRATCH" not in environment()
    monkeypatch.setenv("STEEPY_TEST_ADDED", "yes")
    assert environment()["STEEPY_TEST_ADDED"] == "yes"
    monkeypatch.delenv("STEEPY_TEST_ADDED")
    assert "STEEPY_TEST_ADDED" not in environment()
    monkeypatch.setenv("HOME", "/elsewhere")  # a changed value, same keys
    assert environment()["HOME"] == "/elsewhere"
