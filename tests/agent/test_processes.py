"""Process handling: the command line, environment, outputs, logs and killing whole trees."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest

from steepy.agent import AgentConfig, LocalAgent, log_path
from steepy.model.policies import RetryPolicy, TimeoutPolicy
from steepy.model.processchain import Argument, ArgumentVariable, Executable, ProcessChain
from steepy.model.submission import ProcessChainStatus
from tests.agent.harness import inputs, running, tool_executable

PY = sys.executable


def agent(tmp_path: Path, **settings) -> LocalAgent:
    settings.setdefault("log_dir", tmp_path / "logs")
    settings.setdefault("kill_grace_period_ms", 2000)
    return LocalAgent("agent-1", AgentConfig(**settings))


def python(code: str, service_id: str = "py", exe_id: str = "e", **policies) -> Executable:
    return Executable(exe_id, PY, service_id, inputs(["-S", "-c", code]), **policies)


# -- the command line -----------------------------------------------------------------------------


@pytest.mark.process
async def test_arguments_are_an_argv_never_a_shell(tmp_path):
    out = tmp_path / "argv.json"
    code = f"import sys, json; json.dump(sys.argv[1:], open({str(out)!r}, 'w'))"
    args = [
        Argument("a", ArgumentVariable("va", "$HOME; echo hi"), "input"),
        Argument("b", ArgumentVariable("vb", "x y"), "input", label="--opt"),
        Argument("c", ArgumentVariable("vc", "true"), "input", label="--yes", data_type="boolean"),
        Argument("d", ArgumentVariable("vd", "false"), "input", label="--no", data_type="boolean"),
        Argument("e", ArgumentVariable("ve", "*"), "input"),
    ]
    exe = Executable("e", PY, "py", inputs(["-S", "-c", code]) + args)
    outcome = await agent(tmp_path).execute(ProcessChain("c", [exe]))
    assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message
    assert json.loads(out.read_text()) == ["$HOME; echo hi", "--opt", "x y", "--yes", "*"]


@pytest.mark.process
async def test_stdout_and_stderr_are_merged_line_by_line(tmp_path):
    code = ("import sys\nsys.stdout.write('out1\\n'); sys.stdout.flush()\n"
            "sys.stderr.write('err1\\n'); sys.stderr.flush()\nprint('out2', end='')\nsys.exit(3)")
    outcome = await agent(tmp_path).execute(ProcessChain("c", [python(code, "merge")]))
    assert outcome.status == ProcessChainStatus.ERROR
    assert outcome.attempts[0].last_lines == ["out1", "err1", "out2"]
    assert outcome.error_message.startswith("Execution of service `merge' failed: ")
    assert "exited with code 3" in outcome.error_message
    assert outcome.error_message.endswith("Last output:\nout1\nerr1\nout2")


@pytest.mark.process
async def test_only_the_last_lines_are_kept(tmp_path):
    code = "for i in range(50): print(i)\nraise SystemExit(1)"
    outcome = await agent(tmp_path, output_lines_to_collect=3).execute(
        ProcessChain("c", [python(code)]))
    assert outcome.attempts[0].last_lines == ["47", "48", "49"]
    assert outcome.error_message.endswith("Last output:\n47\n48\n49")


@pytest.mark.process
async def test_a_signal_is_named(tmp_path):
    code = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    outcome = await agent(tmp_path).execute(ProcessChain("c", [python(code, "sig")]))
    assert outcome.status == ProcessChainStatus.ERROR
    assert outcome.attempts[0].signal == 9 and outcome.attempts[0].exit_code is None
    assert "killed by signal 9 (SIGKILL)" in outcome.error_message


@pytest.mark.process
@pytest.mark.parametrize("kind", ["missing", "not executable", "directory"])
async def test_a_tool_that_cannot_run_is_an_error_naming_service_and_path(tmp_path, kind):
    path = tmp_path / "tool"
    if kind == "not executable":
        path.write_text("#!/bin/sh\necho hi\n")
        path.chmod(0o644)
    elif kind == "directory":
        path.mkdir()
    exe = Executable("e", str(path), "broken", retries=RetryPolicy(max_attempts=2))
    outcome = await agent(tmp_path).execute(ProcessChain("c", [exe]))
    assert outcome.status == ProcessChainStatus.ERROR
    assert "service `broken'" in outcome.error_message
    assert f"`{path}'" in outcome.error_message
    assert len(outcome.attempts) == 2  # retried like any failure (Steep retries everything)


async def test_unsupported_runtime(tmp_path):
    exe = Executable("e", "image", "k8s", runtime="kubernetes")
    outcome = await agent(tmp_path).execute(ProcessChain("c", [exe]))
    assert outcome.status == ProcessChainStatus.ERROR
    assert "unsupported runtime `kubernetes'" in outcome.error_message


# -- environment and working directory -----------------------------------------------------------


@pytest.mark.process
async def test_environment_and_working_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("FROM_AGENT", "agent-value")
    work = tmp_path / "work"
    work.mkdir()
    calls = [{"env_file": str(tmp_path / "env1.json"), "fail": {"exit_code": 5}},
             {"env_file": str(tmp_path / "env2.json"), "print": ["ok"]}]
    exe, _ = tool_executable("exe$1", "envsvc", calls, tmp_path, retries=RetryPolicy(max_attempts=2))
    cwd_probe = python(f"import os; open({str(tmp_path / 'cwd')!r}, 'w').write(os.getcwd())")
    a = agent(tmp_path, workdir=work, env={"FROM_CONFIG": "config-value"})
    outcome = await a.execute(ProcessChain("chain-7", [exe, cwd_probe]),
                              submission_id="sub-3", run_number=2)
    assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message
    first = json.loads((tmp_path / "env1.json").read_text())
    second = json.loads((tmp_path / "env2.json").read_text())
    for env in (first, second):
        assert env["FROM_AGENT"] == "agent-value"
        assert env["FROM_CONFIG"] == "config-value"
        assert env["STEEPY_SUBMISSION_ID"] == "sub-3"
        assert env["STEEPY_PROCESS_CHAIN_ID"] == "chain-7"
        assert env["STEEPY_RUN_NUMBER"] == "2"
        assert env["STEEPY_EXECUTABLE_ID"] == "exe$1"
    assert (first["STEEPY_ATTEMPT"], first["STEEPY_LAST_EXIT_CODE"]) == ("1", "")
    assert (second["STEEPY_ATTEMPT"], second["STEEPY_LAST_EXIT_CODE"]) == ("2", "5")
    assert (tmp_path / "cwd").read_text() == str(work)


# -- outputs and results -------------------------------------------------------------------------


@pytest.mark.process
async def test_output_directories_exist_before_the_first_executable(tmp_path):
    out_file = tmp_path / "a" / "b" / "out.txt"
    out_dir = tmp_path / "d" / "results"
    probe = tmp_path / "probe.json"
    code = ("import json, os, sys\n"
            f"json.dump([os.path.isdir({str(out_file.parent)!r}), os.path.isdir({str(out_dir)!r})],"
            f" open({str(probe)!r}, 'w'))")
    first = python(code, exe_id="first")
    write = python(
        "import os, sys\n"
        "open(sys.argv[1], 'w').write('x')\n"
        "os.makedirs(os.path.join(sys.argv[2], 'sub'))\n"
        "for name in ('b.txt', 'a.txt', 'sub/c.txt'): open(os.path.join(sys.argv[2], name), 'w')\n",
        exe_id="second")
    write.arguments += [
        Argument("o1", ArgumentVariable("file_out", str(out_file)), "output"),
        Argument("o2", ArgumentVariable("dir_out", str(out_dir)), "output", data_type="directory"),
    ]
    outcome = await agent(tmp_path).execute(ProcessChain("c", [first, write]))
    assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message
    assert json.loads(probe.read_text()) == [True, True]
    assert outcome.results == {
        "file_out": [str(out_file)],
        "dir_out": [str(out_dir / "a.txt"), str(out_dir / "b.txt"), str(out_dir / "sub" / "c.txt")],
    }


async def test_an_output_directory_that_cannot_be_made_is_an_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    exe = python("pass")
    exe.arguments.append(Argument("o", ArgumentVariable("v", str(blocker / "x" / "out")), "output"))
    outcome = await agent(tmp_path).execute(ProcessChain("c", [exe]))
    assert outcome.status == ProcessChainStatus.ERROR
    assert str(blocker / "x") in outcome.error_message and outcome.attempts == []


# -- logs ----------------------------------------------------------------------------------------


@pytest.mark.process
async def test_log_file_per_chain_and_run_can_be_tailed(tmp_path):
    logs = tmp_path / "logs"
    go = tmp_path / "go"  # the tool prints its second line only once the test has seen the first
    code = ("import os, sys, time\nprint('first', flush=True)\n"
            f"end = time.time() + 60\nwhile not os.path.exists({str(go)!r}) and time.time() < end:\n"
            "    time.sleep(0.01)\nprint('second')")
    a = agent(tmp_path, log_dir=logs)
    task = asyncio.ensure_future(a.execute(ProcessChain("pc1", [python(code)]), run_number=1))
    path = log_path(logs, "pc1", 1)
    assert path == logs / "pc1.log"
    seen = ""
    end = time.monotonic() + 30
    while time.monotonic() < end and not task.done():  # tail the file while the chain runs
        await asyncio.sleep(0.01)
        if path.exists():
            seen = path.read_text()
            if seen:
                break
    assert seen == "first\n" and not task.done()
    go.write_text("")
    assert (await task).status == ProcessChainStatus.SUCCESS
    assert path.read_text() == "first\nsecond\n"
    await a.execute(ProcessChain("pc1", [python("print('again')")]), run_number=2)
    assert (logs / "pc1.2.log").read_text() == "again\n"
    assert log_path(logs, "abcdef", 3, group_by_prefix=2) == logs / "ab" / "abcdef.3.log"


@pytest.mark.process
async def test_a_run_that_prints_nothing_makes_no_log_file(tmp_path):
    # as Steep's appender: the file comes with the first line (a large workflow of silent
    # tools costs no file each); a later line of a silent first tool still has its log
    logs = tmp_path / "logs"
    a = agent(tmp_path, log_dir=logs)
    silent = python("pass")
    outcome = await a.execute(ProcessChain("quiet", [silent]), run_number=1)
    assert outcome.status == ProcessChainStatus.SUCCESS and not logs.exists()
    await a.execute(ProcessChain("late", [silent, python("print('now')")]), run_number=1)
    assert (logs / "late.log").read_text() == "now\n"
    assert sorted(p.name for p in logs.iterdir()) == ["late.log"]


@pytest.mark.process
async def test_no_log_dir_means_no_log(tmp_path):
    outcome = await agent(tmp_path, log_dir=None).execute(ProcessChain("c", [python("print(1)")]))
    assert outcome.status == ProcessChainStatus.SUCCESS
    assert not (tmp_path / "logs").exists()


# -- killing process trees -----------------------------------------------------------------------


@pytest.mark.process
async def test_timeout_kills_a_grandchild_in_a_new_session(tmp_path):
    pid_file = tmp_path / "grandchild.pid"
    # the limit fires long after the grandchild was forked, even on a loaded machine
    exe, _ = tool_executable("e", "forker", [{"grandchild": str(pid_file), "block_ms": 10000}],
                             tmp_path, max_runtime=TimeoutPolicy(1500))
    outcome = await agent(tmp_path).execute(ProcessChain("c", [exe]))
    assert outcome.status == ProcessChainStatus.CANCELLED
    assert outcome.attempts[0].timeout_kind == "maximum runtime"
    assert pid_file.exists(), "the grandchild was not forked before the timeout"
    grandchild = int(pid_file.read_text())
    assert not running(grandchild)


@pytest.mark.process
async def test_cancel_kills_a_double_forked_daemon(tmp_path):
    pid_file = tmp_path / "daemon.pid"
    exe, _ = tool_executable("e", "daemonizer", [{"daemon": str(pid_file), "block_ms": 5000}],
                             tmp_path)
    a = agent(tmp_path)
    task = asyncio.ensure_future(a.execute(ProcessChain("c", [exe])))
    end = time.monotonic() + 30
    while time.monotonic() < end and not (pid_file.exists() and pid_file.read_text()):
        await asyncio.sleep(0.01)
    daemon = int(pid_file.read_text())
    assert running(daemon)
    a.cancel()
    assert (await task).status == ProcessChainStatus.CANCELLED
    assert not running(daemon)


@pytest.mark.process
async def test_a_background_child_holding_the_output_ends_with_the_tool(tmp_path):
    # the tool exits at once but leaves a child (same group) that keeps the pipe open
    code = ("import subprocess, sys\n"
            f"p = subprocess.Popen([{PY!r}, '-S', '-c', 'import time; time.sleep(30)'])\n"
            f"open({str(tmp_path / 'bg.pid')!r}, 'w').write(str(p.pid))\nprint('done')")
    start = time.monotonic()
    outcome = await agent(tmp_path, kill_grace_period_ms=500).execute(
        ProcessChain("c", [python(code)]))
    assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message
    assert outcome.attempts[0].last_lines == ["done"]
    assert not running(int((tmp_path / "bg.pid").read_text()))
    assert time.monotonic() - start < 10  # not the child's 30 s (generous for a loaded machine)


@pytest.mark.process
async def test_sigterm_ignored_then_sigkill_after_the_grace_period(tmp_path):
    # the tool ignores SIGTERM long before the limit fires, even when it starts slowly
    exe, _ = tool_executable("e", "stubborn", [{"ignore_term": True, "block_ms": 20000}],
                             tmp_path, max_runtime=TimeoutPolicy(1000, error_on_timeout=True))
    start = time.monotonic()
    outcome = await agent(tmp_path, kill_grace_period_ms=400).execute(ProcessChain("c", [exe]))
    elapsed = time.monotonic() - start
    assert outcome.status == ProcessChainStatus.ERROR
    assert outcome.error_message == "Execution of service `stubborn' timed out after 1000 ms (maximum runtime)"
    assert outcome.attempts[0].signal == 9
    assert 1.4 <= elapsed < 6  # 1000 ms + 400 ms grace, generously bounded above


@pytest.mark.process
async def test_a_missing_working_directory_is_named(tmp_path):
    outcome = await agent(tmp_path, workdir=tmp_path / "nowhere").execute(
        ProcessChain("c", [python("pass", "wd")]))
    assert outcome.status == ProcessChainStatus.ERROR
    assert "service `wd'" in outcome.error_message
    assert str(tmp_path / "nowhere") in outcome.error_message
