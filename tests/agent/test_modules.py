"""Environment modules per service (issue 27): `modules: [name/version]' are loaded with the
real Lmod (.ci/lmod: Debian's package and a test tree with hello/1.0 and hello/2.0) before
the tool, whose environment is then the modules'; a module Lmod does not know fails the
attempt with Lmod's words."""

from __future__ import annotations

import sys

import pytest

from steepy.agent import AgentConfig, LocalAgent
from steepy.agent.modules import ModulesFailed, lmod_command, module_environment
from steepy.model.processchain import Argument, ArgumentVariable, Executable, ProcessChain
from steepy.model.software import PythonEnvironment
from steepy.model.submission import ProcessChainStatus
from tests.components import component, environment

VERSION = f"{sys.version_info.major}.{sys.version_info.minor}"


@pytest.fixture(scope="module")
def lmod() -> dict[str, str]:
    return component("lmod")


def _sh(script: str, modules: list[str], **declared) -> Executable:
    words = [Argument(f"a{i}", ArgumentVariable(f"v{i}", v), "input")
             for i, v in enumerate(["-c", script])]
    return Executable("e", "/bin/sh", "greet", words, modules=modules, **declared)


def _agent(lmod: dict, tmp_path, **extra) -> LocalAgent:
    return LocalAgent("a", AgentConfig(log_dir=None, env={**environment(lmod), **extra},
                                       environments_path=str(tmp_path / "envs")))


SCRIPT = 'hello; echo "$HELLO_VERSION $LOADEDMODULES"'


async def test_a_tool_runs_with_its_modules_loaded(lmod, tmp_path) -> None:
    agent = _agent(lmod, tmp_path)
    outcome = await agent.execute(ProcessChain("c", [_sh(SCRIPT, ["hello/1.0"])]),
                                  submission_id="s")
    assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message
    assert outcome.attempts[0].last_lines == ["hello from module hello/1.0", "1.0 hello/1.0"]
    newest = await agent.execute(ProcessChain("d", [_sh(SCRIPT, ["hello"])]), submission_id="s")
    assert newest.attempts[0].last_lines == ["hello from module hello/2.0", "2.0 hello/2.0"]
    plain = await agent.execute(ProcessChain("p", [_sh("echo ${HELLO_VERSION:-none}", [])]),
                                submission_id="s")
    assert plain.attempts[0].last_lines == ["none"]  # another service is left alone


async def test_an_unknown_module_fails_the_attempt_with_lmods_words(lmod, tmp_path) -> None:
    outcome = await _agent(lmod, tmp_path).execute(
        ProcessChain("c", [_sh(SCRIPT, ["hello/1.0", "gcc/99"])]), submission_id="s")
    assert outcome.status == ProcessChainStatus.ERROR
    message = outcome.error_message or ""
    assert message.startswith("Execution of service `greet' failed: environment modules "
                              "hello/1.0, gcc/99 could not be loaded: "), message
    assert '"gcc/99"' in message and "unknown" in message, message


async def test_modules_come_before_the_python_environment(lmod, tmp_path) -> None:
    """uv runs with the modules loaded (a module may provide the Python); the environment's
    bin directory is first on PATH, the module's next."""
    exe = _sh('hello; echo "$PATH" | tr : "\\n" | head -2; python -c "import idna"',
              ["hello/2.0"], python=PythonEnvironment(("idna",), VERSION))
    outcome = await _agent(lmod, tmp_path).execute(ProcessChain("c", [exe]), submission_id="s")
    assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message
    greeting, first, second = outcome.attempts[0].last_lines
    assert greeting == "hello from module hello/2.0"
    assert first.startswith(str(tmp_path / "envs")) and first.endswith("/bin")
    assert second == f"{lmod['dir']}/hello-2.0/bin"


async def test_module_environment_reports_what_lmod_changed(lmod) -> None:
    base = {"PATH": "/usr/bin:/bin", "KEEP": "me", **environment(lmod)}
    loaded = await module_environment(["hello/1.0"], base)
    assert loaded["KEEP"] == "me" and loaded["HELLO_VERSION"] == "1.0"
    assert loaded["PATH"] == f"{lmod['dir']}/hello-1.0/bin:/usr/bin:/bin"
    assert not {"SHLVL", "_", "PWD"} & set(loaded)  # bash's own are not passed on
    assert base == {"PATH": "/usr/bin:/bin", "KEEP": "me", **environment(lmod)}


def test_without_lmod_the_message_says_where_it_was_looked_for(monkeypatch) -> None:
    import steepy.agent.modules as modules

    assert lmod_command({"LMOD_CMD": "/opt/lmod/lmod"}) == "/opt/lmod/lmod"
    monkeypatch.setattr(modules, "LMOD_PATHS", ("/nonexistent/lmod",))
    with pytest.raises(ModulesFailed, match="LMOD_CMD is not set and none of /nonexistent/lmod"):
        lmod_command({})
