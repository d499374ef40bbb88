"""The executor (steepy.agent.executor): it spawns every tool and is their subreaper, so every
process of an attempt ends with the attempt (a double-forked daemon, a child that called
`setsid`, also after the tool exited by itself), and with the engine when the engine dies
(`kill -9` of its pid or of its whole process group). When the executor dies alone, the
engine ends what it ran, the attempt fails saying so, and the next attempt gets a new one."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from steepy.agent import executor
from steepy.agent.cancel import CancelToken
from steepy.agent.process import Limits, run_process
from tests.agent.harness import running
from tests.conftest import ROOT

pytestmark = [pytest.mark.process]

PY = sys.executable

# forks a child in a new session (`setsid`, stays below the tool) and a double-forked daemon
# (new session, its parent exits, it lets go of the output and runs with an empty environment,
# as daemons often do): waits until both wrote their pids, then blocks for argv[2] seconds
FORKER = textwrap.dedent("""
    import os, sys, time
    out = sys.argv[1]

    def sleeper(double):
        if os.fork():
            if double:
                os.wait()
            return
        os.setsid()
        if double and os.fork():
            os._exit(0)
        with open(out + (".daemon" if double else ".setsid"), "w") as f:
            f.write(str(os.getpid()))
        if double:
            os.closerange(0, 3)
            os.execve(sys.executable, [sys.executable, "-S", "-c", "import time; time.sleep(60)"],
                      {})
        time.sleep(60)
        os._exit(0)

    sleeper(False)
    sleeper(True)
    # both have said who they are before the tool goes on (with 0 s it exits at once, and
    # its children would be ended before they wrote their pids)
    while not all(os.path.exists(out + s) and open(out + s).read() for s in (".setsid", ".daemon")):
        time.sleep(0.01)
    print("forked", flush=True)
    time.sleep(float(sys.argv[2]))
""")


def wait_for(condition, timeout_s: float, what: str) -> None:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if condition():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


async def await_for(condition, timeout_s: float, what: str) -> None:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def forked(out: Path) -> list[int]:
    pids = []
    for suffix in (".setsid", ".daemon"):
        path = Path(str(out) + suffix)
        if path.exists() and path.read_text():
            pids.append(int(path.read_text()))
    return pids


async def run(argv: list[str], **kwargs):
    loop = asyncio.get_running_loop()
    kwargs.setdefault("limits", Limits())
    kwargs.setdefault("token", CancelToken(loop))
    kwargs.setdefault("cwd", None)
    return await run_process(argv, env={**os.environ, **kwargs.pop("env", {})}, **kwargs)


async def test_identity_and_on_started(tmp_path: Path) -> None:
    started = []
    result = await run([PY, "-S", "-c", "print('hi')"], on_started=started.append)
    assert result.ok and result.last_lines == ["hi"]
    pid, start = executor.identity()
    assert psutil.Process(pid).create_time() == start
    assert psutil.Process(pid).ppid() == os.getpid()
    (pgid,) = started
    assert pgid > 0 and not running(pgid)  # the tool's own group: reaped by now


async def test_a_timeout_ends_a_setsid_child_and_a_double_forked_daemon(tmp_path: Path) -> None:
    out = tmp_path / "t"
    result = await run([PY, "-S", "-c", FORKER, str(out), "30"], grace_ms=500,
                       limits=Limits(runtime_ms=1500))
    assert result.timeout_kind == "maxRuntime" and result.last_lines == ["forked"]
    pids = forked(out)
    assert len(pids) == 2
    assert not any(running(p) for p in pids)


async def test_a_tool_that_exits_takes_its_daemon_and_setsid_child_along(tmp_path: Path) -> None:
    # today's guardian left them running: the daemon lets go of the pipe, the other child is
    # in a session of its own
    out = tmp_path / "t"
    result = await run([PY, "-S", "-c", FORKER, str(out), "0"], grace_ms=300)
    assert result.ok, result
    pids = forked(out)
    assert len(pids) == 2
    await await_for(lambda: not any(running(p) for p in pids), 3, "the leftovers to end")


async def test_an_attempt_ending_leaves_another_attempts_processes_alone(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    loop = asyncio.get_running_loop()
    cancel_b = CancelToken(loop)
    other = asyncio.ensure_future(run([PY, "-S", "-c", FORKER, str(b), "30"], grace_ms=300,
                                      token=cancel_b))
    await await_for(lambda: len(forked(b)) == 2, 20, "b's children")
    # (a daemon re-parented to the executor and whose session nobody saw being made is known
    # by its start time: it belongs to the attempts open then, to a too if a started within
    # the same clock tick)
    await asyncio.sleep(0.05)
    result = await run([PY, "-S", "-c", FORKER, str(a), "30"], grace_ms=300,
                       limits=Limits(runtime_ms=1000))
    assert result.timeout_kind == "maxRuntime"
    assert not any(running(p) for p in forked(a))
    assert [running(p) for p in forked(b)] == [True, True]
    cancel_b.cancel()
    assert (await other).cancelled
    assert not any(running(p) for p in forked(b))


ENGINE = textwrap.dedent("""
    import asyncio, os, sys
    from steepy.agent import executor
    from steepy.agent.cancel import CancelToken
    from steepy.agent.process import Limits, run_process

    async def main():
        loop = asyncio.get_running_loop()
        runs = [run_process(argv, env=dict(os.environ), cwd=None, limits=Limits(),
                            token=CancelToken(loop), grace_ms=int(sys.argv[2]))
                for argv in eval(sys.argv[3])]
        task = asyncio.gather(*runs)
        await asyncio.sleep(0.05)
        with open(sys.argv[1], "w") as f:
            f.write("%d %f" % executor.identity())
        await task

    asyncio.run(main())
""")


def start_engine(tmp_path: Path, argvs: list[list[str]], grace_ms: int = 1000):
    ident = tmp_path / "executor"
    engine = subprocess.Popen([PY, "-c", ENGINE, str(ident), str(grace_ms), repr(argvs)],
                              cwd=ROOT, start_new_session=True)
    wait_for(lambda: ident.exists() and ident.read_text(), 30, "the executor")
    pid, started = ident.read_text().split()
    return engine, int(pid)


@pytest.mark.parametrize("how", ["pid", "group"])
def test_kill_9_of_the_engine_ends_every_process_of_its_tools(tmp_path: Path, how: str) -> None:
    outs = [tmp_path / "a", tmp_path / "b"]
    stubborn = [PY, "-S", "-c", "import signal, time; signal.signal(signal.SIGTERM, "
                "signal.SIG_IGN); open(%r, 'w').write('1'); time.sleep(60)"
                % str(tmp_path / "stubborn")]
    engine, executor_pid = start_engine(
        tmp_path, [[PY, "-S", "-c", FORKER, str(out), "60"] for out in outs] + [stubborn])
    try:
        wait_for(lambda: all(len(forked(o)) == 2 for o in outs)
                 and (tmp_path / "stubborn").exists(), 30, "the tools' children")
        # the three tools and the two daemons, re-parented to the executor
        wait_for(lambda: len(psutil.Process(executor_pid).children()) == 5, 10, "the daemons")
        tools = [c.pid for c in psutil.Process(executor_pid).children()]
        victims = tools + [p for o in outs for p in forked(o)]
        if how == "pid":
            os.kill(engine.pid, signal.SIGKILL)
        else:
            os.killpg(engine.pid, signal.SIGKILL)
        engine.wait()
        start = time.monotonic()
        # SIGTERM at once, SIGKILL after the grace period (the stubborn tool ignores SIGTERM)
        wait_for(lambda: not running(executor_pid), 10, "the executor to end")
        assert time.monotonic() - start >= 0.8
        assert not [p for p in victims if running(p)]
    finally:
        if engine.poll() is None:
            os.killpg(engine.pid, signal.SIGKILL)
            engine.wait()


async def test_the_executor_dying_alone_fails_the_attempt_and_a_new_one_works(tmp_path) -> None:
    out = tmp_path / "t"
    run_env = {"STEEPY_PROCESS_CHAIN_ID": f"c-{os.getpid()}", "STEEPY_RUN_NUMBER": "2"}
    task = asyncio.ensure_future(run([PY, "-S", "-c", FORKER, str(out), "60"], grace_ms=500,
                                     env=run_env))
    await await_for(lambda: len(forked(out)) == 2, 20, "the tool's children")
    setsid_child, daemon = forked(out)
    old, _ = executor.identity()
    tool = [c for c in psutil.Process(old).children() if c.pid not in forked(out)][0].pid
    os.kill(old, signal.SIGKILL)
    result = await asyncio.wait_for(task, 10)
    assert result.executor_lost and not result.ok
    assert result.spawn_error == "the executor process died while the tool ran (it was ended)"
    assert not running(tool)  # its group was ended by the engine
    # the child in a session of its own was re-parented to init: found by the run in its
    # environment and ended before the attempt failed (the next one never overlaps it; a
    # review saw them overlap); the daemon that emptied its environment is beyond reach (the
    # limit of an executor killed alone), ended by hand
    assert not running(setsid_child)
    psutil.Process(daemon).kill()
    again = await run([PY, "-S", "-c", "print('again')"])
    assert again.ok and again.last_lines == ["again"]
    assert executor.identity()[0] != old


async def test_a_spawn_error_names_the_tool(tmp_path: Path) -> None:
    result = await run([str(tmp_path / "missing")])
    assert result.spawn_error == f"cannot run `{tmp_path / 'missing'}': No such file or directory"
    wd = await run_process([PY, "-S", "-c", "pass"], env={}, cwd=tmp_path / "nowhere",
                           limits=Limits(), token=CancelToken(asyncio.get_running_loop()))
    assert wd.spawn_error == (f"cannot run `{PY}': No such file or directory: "
                              f"`{tmp_path / 'nowhere'}'")


async def test_a_cancelled_caller_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "t"
    task = asyncio.ensure_future(run([PY, "-S", "-c", FORKER, str(out), "60"], grace_ms=5000))
    await await_for(lambda: len(forked(out)) == 2, 20, "the tool's children")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # no grace period: SIGKILL at once
    await await_for(lambda: not any(running(p) for p in forked(out)), 3, "the children to end")


async def test_on_kill_runs_beside_the_sigterm_of_a_timeout_only(tmp_path: Path) -> None:
    # a runtime's Launch.stop (e.g. `docker kill NAME') reaches run_process as on_kill
    calls = []

    async def on_kill() -> None:
        calls.append(time.monotonic())

    timed_out = await run([PY, "-S", "-c", "import time; time.sleep(30)"], grace_ms=300,
                          limits=Limits(runtime_ms=300), on_kill=on_kill)
    assert timed_out.timeout_kind == "maxRuntime" and len(calls) == 1
    finished = await run([PY, "-S", "-c", "pass"], on_kill=on_kill)
    assert finished.ok and len(calls) == 1


async def test_a_tool_gets_default_signal_dispositions(tmp_path: Path) -> None:
    # nothing the executor catches or ignores is ignored in a tool
    # (Python installs its SIGINT handler only where SIGINT was not ignored)
    code = ("import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler,"
            " *[signal.getsignal(s) == signal.SIG_DFL for s in "
            "(signal.SIGTERM, signal.SIGCHLD, signal.SIGHUP, signal.SIGPIPE)])")
    # an engine started under nohup passes SIGHUP on ignored (a fresh clone's make test under
    # nohup failed here before the executor reset every disposition): ignore it here too
    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        result = await run([PY, "-S", "-c", code])
    finally:
        signal.signal(signal.SIGHUP, before)
    assert result.last_lines == ["True True True True False"]  # (Python ignores SIGPIPE)


async def test_the_program_is_looked_for_on_the_tools_path(tmp_path: Path) -> None:
    # as subprocess does: the PATH of the tool's environment, a file that cannot be executed
    # is passed over (and named when nothing else is found)
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    (first / "tool").write_text("#!/bin/sh\necho first\n")  # not executable
    (second / "tool").write_text("#!/bin/sh\necho second\n")
    (second / "tool").chmod(0o755)
    loop = asyncio.get_running_loop()

    async def run_tool(path: str):
        return await run_process(["tool"], env={"PATH": path}, cwd=None, limits=Limits(),
                                 token=CancelToken(loop))

    found = await run_tool(f"{tmp_path / 'none'}:{first}:{second}")
    assert found.ok and found.last_lines == ["second"]
    assert (await run_tool(f"{first}")).spawn_error == "cannot run `tool': Permission denied"
    assert (await run_tool(f"{tmp_path}")).spawn_error == (
        "cannot run `tool': No such file or directory")
    with_cwd = await run_process(["tool"], env={"PATH": str(second)}, cwd=tmp_path,
                                 limits=Limits(), token=CancelToken(loop))
    assert with_cwd.ok and with_cwd.last_lines == ["second"]  # (through subprocess)


async def test_a_tool_runs_where_the_engine_is_now_not_where_the_executor_started(
        tmp_path: Path, monkeypatch) -> None:
    """The executor is started once; a program (the Python API) may change its directory
    later: a tool without a workdir runs in the engine's directory of the moment."""
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    monkeypatch.chdir(first)
    assert (await run(["sh", "-c", "pwd"])).last_lines == [str(first)]
    monkeypatch.chdir(second)
    assert (await run(["sh", "-c", "pwd"])).last_lines == [str(second)]
    assert (await run(["sh", "-c", "pwd"], cwd=str(first))).last_lines == [str(first)]
