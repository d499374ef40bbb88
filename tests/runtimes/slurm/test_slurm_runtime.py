"""The `slurm` runtime against a real single-node cluster (`.ci/slurm start`): output, exit
codes and retries as for local processes; `maxRuntime', `maxInactivity' and a cancel end the
job with nothing left running; a job cancelled by SLURM is recorded as such; a leftover job of
a dead engine is ended before the chain runs again; and the mapping to srun options."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import time
from datetime import datetime, timezone

import pytest

from steepy.agent import AgentConfig, LocalAgent
from steepy.model.attempt import AGENT_LOST, AttemptRecord
from steepy.model.policies import RetryPolicy, TimeoutPolicy
from steepy.model.processchain import Argument, ArgumentVariable, Executable, ProcessChain
from steepy.model.submission import ProcessChainStatus
from steepy.runtimes.slurm import final_state, srun_argv
from tests.components import component, environment
from tests.runtimes.slurm.cluster import ended, jobs_named, processes_with

pytestmark = [pytest.mark.timeout(900), pytest.mark.process]  # a cold start may install SLURM first


@pytest.fixture(scope="module")
def slurm() -> dict[str, str]:
    return component("slurm")


def _agent(slurm: dict, tmp_path, **slurm_settings) -> LocalAgent:
    config = AgentConfig(log_dir=tmp_path / "logs", kill_grace_period_ms=1000,
                         env=environment(slurm), tmp_path=str(tmp_path),
                         runtimes={"slurm": {"partition": slurm["partition"], **slurm_settings}})
    return LocalAgent("agent-1", config)


def _exe(script: str, exe_id: str = "e", **policies) -> Executable:
    words = [Argument(f"a{i}", ArgumentVariable(f"v{i}", v), "input")
             for i, v in enumerate(["-c", script])]
    return Executable(exe_id, "/bin/bash", "tool", words, runtime="slurm", **policies)


async def _final_state(slurm: dict, job: str) -> str | None:
    """What SLURM says of a job once its state is final: a job whose srun has ended may still
    be COMPLETING for a while (its epilog running, its processes being reaped), a state to
    wait out, not to assert on."""
    return await final_state(job, {**os.environ, **environment(slurm)}, within_s=60,
                             timeout_s=30)


def _job_id(lines: list[str]) -> str:
    found = [m.group(1) for line in lines for m in [re.match(r"job (\d+)", line)] if m]
    assert found, lines
    return found[0]


async def test_output_and_environment_reach_the_attempt(slurm, tmp_path) -> None:
    exe = _exe("echo job $SLURM_JOB_ID attempt $STEEPY_ATTEMPT of $STEEPY_PROCESS_CHAIN_ID")
    outcome = await _agent(slurm, tmp_path).execute(ProcessChain("ok-chain", [exe]))
    assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message
    (line,) = outcome.attempts[0].last_lines
    assert re.fullmatch(r"job \d+ attempt 1 of ok-chain", line), line
    assert await _final_state(slurm, _job_id([line])) == "COMPLETED"
    assert (tmp_path / "logs").exists()


async def test_a_completing_job_is_waited_out_until_its_state_is_final(tmp_path) -> None:
    """`final_state' (used above and for a failed attempt's message) asks until SLURM shows a
    final state: COMPLETING, as `scontrol' says just after srun has ended, is not one."""
    calls, scontrol = tmp_path / "calls", tmp_path / "scontrol"
    scontrol.write_text(f"""#!/bin/sh
echo x >> {calls}
[ "$(wc -l < {calls})" -ge 3 ] && state=COMPLETED || state=COMPLETING
echo "JobId=$4 JobName=steepy-c JobState=$state Reason=None"
""")
    scontrol.chmod(0o755)
    assert await final_state("12", dict(os.environ), scontrol=str(scontrol), every_s=0.01) \
        == "COMPLETED"
    assert len(calls.read_text().split()) == 3
    calls.unlink()  # a job that stays COMPLETING: its last state once `within_s' has passed
    assert await final_state("12", dict(os.environ), scontrol=str(scontrol), within_s=0,
                             every_s=0.01) == "COMPLETING"
    assert await final_state("12", dict(os.environ), scontrol=str(tmp_path / "none")) is None


async def test_an_exit_code_and_output_of_a_failing_job(slurm, tmp_path) -> None:
    outcome = await _agent(slurm, tmp_path).execute(
        ProcessChain("fail-chain", [_exe("echo about to fail; exit 3")]))
    assert outcome.status == ProcessChainStatus.ERROR
    assert outcome.attempts[0].exit_code == 3
    assert "exited with code 3" in outcome.error_message
    assert "about to fail" in outcome.error_message


async def test_retries_run_a_new_job_per_attempt(slurm, tmp_path) -> None:
    state = tmp_path / "count"
    script = (f"n=$(cat {state} 2>/dev/null || echo 0); echo $((n + 1)) > {state}; "
              "echo job $SLURM_JOB_ID; [ $n -ge 1 ] || exit 4")
    exe = _exe(script, retries=RetryPolicy.from_json({"maxAttempts": 3, "delay": 10}))
    outcome = await _agent(slurm, tmp_path).execute(ProcessChain("retry-chain", [exe]))
    assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message
    assert [(a.attempt, a.outcome, a.exit_code) for a in outcome.attempts] == [
        (1, "FAILED", 4), (2, "SUCCESS", 0)]
    first, second = (_job_id(a.last_lines) for a in outcome.attempts)
    assert first != second


@pytest.mark.parametrize("policy,status", [
    ("max_runtime", ProcessChainStatus.ERROR), ("max_inactivity", ProcessChainStatus.CANCELLED)])
async def test_a_timeout_ends_the_job_and_its_processes(slurm, tmp_path, policy, status) -> None:
    marker = f"{tmp_path}/stalls"
    # `exec -a MARKER' names the job's process, so that `ps' can find it
    exe = _exe(f"echo job $SLURM_JOB_ID; exec -a '{marker}' sleep 60",
               **{policy: TimeoutPolicy(1500, error_on_timeout=policy == "max_runtime")})
    started = time.monotonic()
    outcome = await _agent(slurm, tmp_path).execute(ProcessChain(f"slow-{policy}", [exe]))
    assert outcome.status == status, outcome.error_message
    assert time.monotonic() - started < 30  # steepy's limit, not SLURM's minute-long one
    words = {"max_runtime": "maximum runtime", "max_inactivity": "maximum inactivity"}[policy]
    assert outcome.attempts[0].timeout_kind == words
    job = _job_id(outcome.attempts[0].last_lines)
    assert ended(slurm, f"steepy-slow-{policy}")
    assert await _final_state(slurm, job) in ("CANCELLED", "COMPLETED", "FAILED")
    assert not processes_with(marker)


async def test_max_inactivity_sees_the_jobs_output_as_it_is_written(slurm, tmp_path) -> None:
    """Six lines 0.5 s apart under a 1.5 s maxInactivity: only lines that arrive while the job
    runs (not when it ends, 3 s later) keep the limit from firing."""
    exe = _exe("for i in 1 2 3 4 5 6; do echo line $i; sleep 0.5; done",
               max_inactivity=TimeoutPolicy(1500, error_on_timeout=True))
    outcome = await _agent(slurm, tmp_path).execute(ProcessChain("streams-chain", [exe]))
    assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message
    assert outcome.attempts[0].last_lines == [f"line {i}" for i in range(1, 7)]


async def test_a_cancel_ends_the_job(slurm, tmp_path) -> None:
    marker = f"{tmp_path}/cancelled"
    agent = _agent(slurm, tmp_path)
    task = asyncio.ensure_future(agent.execute(ProcessChain(
        "cancel-chain", [_exe(f"echo job $SLURM_JOB_ID; exec -a '{marker}' sleep 60")])))
    end = time.monotonic() + 30
    while not processes_with(marker):
        assert time.monotonic() < end, "the job never started"
        await asyncio.sleep(0.1)
    agent.cancel("cancel-chain")
    outcome = await task
    assert outcome.status == ProcessChainStatus.CANCELLED
    assert ended(slurm, "steepy-cancel-chain")
    assert not processes_with(marker)


async def test_a_job_cancelled_by_slurm_is_recorded_as_such(slurm, tmp_path) -> None:
    marker = f"{tmp_path}/outside"
    task = asyncio.ensure_future(_agent(slurm, tmp_path).execute(ProcessChain(
        "outside-chain", [_exe(f"echo job $SLURM_JOB_ID; exec -a '{marker}' sleep 60")])))
    end = time.monotonic() + 30
    while not processes_with(marker):
        assert time.monotonic() < end, "the job never started"
        await asyncio.sleep(0.1)
    (job,) = jobs_named(slurm, "steepy-outside-chain")
    subprocess.run(["scancel", job], env={**os.environ, **environment(slurm)}, check=True,
                   timeout=30)
    outcome = await asyncio.wait_for(task, 60)
    assert outcome.status == ProcessChainStatus.ERROR
    # srun's last lines may or may not carry `*** STEP <job>.0 ... CANCELLED' (srun can see
    # its task end first): what SLURM says of the job is in the message either way
    assert f"(SLURM: job {job} CANCELLED)" in outcome.error_message, outcome.error_message
    assert ended(slurm, "steepy-outside-chain")
    assert await _final_state(slurm, job) == "CANCELLED"


@pytest.mark.parametrize("cut", [False, True], ids=["attempt 1", "attempt 2 of run 2"])
async def test_a_leftover_job_of_an_earlier_run_ends_before_the_chain_runs_again(
        slurm, tmp_path, cut: bool) -> None:
    """What a dead engine (and its executor) left: a job named after the chain. Also when the
    run goes on at attempt 2 (its policy counts run 1's cut attempt): a review saw the two
    jobs run at once, the check made only at attempt 1."""
    env = {**os.environ, **environment(slurm)}
    leftover = subprocess.Popen(
        ["srun", "--quiet", "--job-name=steepy-again-chain", "--", "sleep", "60"], env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        end = time.monotonic() + 30
        while not jobs_named(slurm, "steepy-again-chain"):
            assert time.monotonic() < end, "the leftover job never started"
            time.sleep(0.1)
        (old,) = jobs_named(slurm, "steepy-again-chain")
        history = [AttemptRecord("e", "tool", 1, datetime.now(timezone.utc),
                                 outcome=AGENT_LOST)] if cut else []
        exe = _exe("echo job $SLURM_JOB_ID", retries=RetryPolicy(max_attempts=3)) if cut \
            else _exe("echo job $SLURM_JOB_ID")
        outcome = await _agent(slurm, tmp_path).execute(
            ProcessChain("again-chain", [exe]), run_number=2, history=history)
        assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message
        assert outcome.attempts[-1].attempt == (2 if cut else 1)
        new = _job_id(outcome.attempts[-1].last_lines)
        assert new != old and ended(slurm, "steepy-again-chain")
        assert await _final_state(slurm, old) == "CANCELLED"
        # the new job started only after the old one had ended
        assert leftover.wait(timeout=30) != 0
    finally:
        if leftover.poll() is None:
            leftover.kill()


def test_placement_resources_and_time_as_srun_options() -> None:
    exe = Executable("e", "/opt/tool", "tool",
                     [Argument("i", ArgumentVariable("v", "in.txt"), "input", "--in")],
                     runtime="slurm",
                     runtime_args=[Argument("c", ArgumentVariable("c", "4"), "input",
                                            "--cpus-per-task"),
                                   Argument("m", ArgumentVariable("m", "8G"), "input", "--mem")],
                     max_runtime=TimeoutPolicy(90_000), deadline=TimeoutPolicy(200_000))
    settings = {"command": "/usr/bin/srun", "partition": "batch", "account": "proj", "qos": "low",
                "extraArgs": ["--exclusive"],
                "capabilities": {"gpu": ["--partition=gpu", "--gres=gpu:1"]}}
    assert srun_argv(exe, "steepy-c", settings, ("gpu", "other"), "/work") == [
        "/usr/bin/srun", "--quiet", "--unbuffered", "--job-name=steepy-c", "--ntasks=1",
        "--export=ALL", "--partition=batch", "--account=proj", "--qos=low", "--partition=gpu",
        "--gres=gpu:1",
        "--time=6",  # the deadline (3.3 min) rounded up, plus 2 minutes: never SLURM's call
        "--chdir=/work", "--exclusive", "--cpus-per-task", "4", "--mem", "8G",
        "--", "/opt/tool", "--in", "in.txt"]
    plain = Executable("e", "tool", "tool", runtime="slurm")
    assert srun_argv(plain, "n", {"timeLimit": 3_600_000}) == [
        "srun", "--quiet", "--unbuffered", "--job-name=n", "--ntasks=1", "--export=ALL",
        "--time=60", "--", "tool"]


TOKEN = "tok-4f9a1c2e-never-in-a-job"
PASSWORD = "pw-7d3b-never-in-a-job"


async def test_a_job_gets_the_tools_environment_and_no_secret(slurm, tmp_path,
                                                              monkeypatch) -> None:
    """Issue 24: the job gets exactly the tool's environment (`--export=ALL' of srun's, which
    the agent filtered; also when the engine inherited SLURM_EXPORT_ENV=NONE, as one in a job
    of its own may): what the service declares and the attempt's STEEPY_* variables, but not
    the engine's token, database URL or other settings."""
    monkeypatch.setenv("STEEPY_HTTP_TOKEN", TOKEN)
    monkeypatch.setenv("STEEPY_DB_URL", f"postgresql+psycopg://steepy:{PASSWORD}@db/steepy")
    monkeypatch.setenv("STEEPY_AGENT_INSTANCES", "2")
    monkeypatch.setenv("STEEPY_FOR_THE_TOOL", "passed on purpose")
    monkeypatch.setenv("SLURM_EXPORT_ENV", "NONE")
    exe = _exe("env | sort", exe_id="printenv")
    exe.environment = {"GREETING": "hello from the service", "COUNT": "4"}
    exe.pass_environment = ["STEEPY_FOR_THE_TOOL"]
    outcome = await _agent(slurm, tmp_path).execute(ProcessChain("env-chain", [exe]),
                                                    submission_id="s1")
    assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message
    lines = outcome.attempts[0].last_lines
    assert {"GREETING=hello from the service", "COUNT=4", "STEEPY_FOR_THE_TOOL=passed on purpose",
            "STEEPY_ATTEMPT=1", "STEEPY_SUBMISSION_ID=s1",
            "STEEPY_PROCESS_CHAIN_ID=env-chain"} <= set(lines), lines
    assert any(line.startswith("SLURM_JOB_ID=") for line in lines)  # it ran as a job
    assert not [line for line in lines if line.startswith(("STEEPY_HTTP", "STEEPY_DB",
                                                           "STEEPY_AGENT"))]
    log = "\n".join(p.read_text() for p in (tmp_path / "logs").rglob("*") if p.is_file())
    assert "GREETING=hello from the service" in log
    assert TOKEN not in log and PASSWORD not in log
