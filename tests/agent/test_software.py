"""Python environments per service (issue 27): `python: {requirements, version}' on a service
is built once with the real uv into `<environments.path>/<sha256>', safely when several
processes build at once, and the tool runs in it; a build that cannot fetch fails the attempt
with a message naming the service and uv's words."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from steepy.agent import AgentConfig, LocalAgent
from steepy.agent.pythonenv import python_environment
from steepy.config import load_config
from steepy.generator.executables import ExecutableBuilder
from steepy.model.processchain import Argument, ArgumentVariable, Executable, ProcessChain
from steepy.model.service import Service
from steepy.model.software import PythonEnvironment
from steepy.model.submission import ProcessChainStatus

VERSION = f"{sys.version_info.major}.{sys.version_info.minor}"  # (installed: no download)
SPEC = PythonEnvironment(("idna",), VERSION)


def test_python_and_modules_survive_json_on_the_service_and_the_executable() -> None:
    data = {"id": "s", "name": "S", "description": "d", "path": "python", "runtime": "other",
            "parameters": [], "python": {"requirements": ["idna==3.7", "six"], "version": "3.12"},
            "modules": ["gcc/12", "openmpi"]}
    service = Service.from_json(data)
    assert service.python == PythonEnvironment(("idna==3.7", "six"), "3.12")
    assert service.modules == ["gcc/12", "openmpi"]
    assert service.to_json() == data
    assert Service.from_json(json.loads(json.dumps(service.to_json()))) == service
    bare = {k: v for k, v in data.items() if k not in ("python", "modules")}
    assert Service.from_json(bare).to_json() == bare  # nothing asked: nothing written
    no_version = Service.from_json({**data, "python": {"requirements": []}})
    assert no_version.to_json()["python"] == {"requirements": []}
    ids = iter(f"id{i}" for i in range(10))
    from steepy.generator.nodes import ExecNode
    exe, _ = ExecutableBuilder("/tmp", "/out", {"s": service}, lambda: next(ids)).build(
        ExecNode("a", "s", [], [], []), lambda var: (None, False))
    assert exe.python == service.python and exe.modules == service.modules
    assert Executable.from_json(json.loads(json.dumps(exe.to_json()))) == exe
    assert "python" not in Executable("e", "t", "s").to_json()


def test_the_directory_is_named_by_what_was_asked() -> None:
    digests = {PythonEnvironment(("idna",), "3.11").digest("x86_64"),
               PythonEnvironment(("idna",), "3.12").digest("x86_64"),
               PythonEnvironment(("idna", "six"), "3.11").digest("x86_64"),
               PythonEnvironment(("idna",), None).digest("x86_64"),
               PythonEnvironment(("idna",), "3.11").digest("aarch64")}
    assert len(digests) == 5 and all(len(d) == 64 for d in digests)
    assert SPEC.digest("x86_64") == PythonEnvironment(("idna",), VERSION).digest("x86_64")


def test_bad_python_and_modules_are_located(tmp_path) -> None:
    from steepy.documents.loading import read_services
    from steepy.errors import InputError

    path = tmp_path / "s.yaml"
    path.write_text("""\
- id: s
  name: s
  description: s
  path: python
  runtime: other
  parameters: []
  python:
    version: 3.10
    packages: [idna]
  modules: [gcc/12, two words]
""")
    with pytest.raises(InputError) as raised:
        read_services(str(path))
    shown = [str(p) for p in raised.value.problems]
    assert any(s.startswith(f"{path}:8:14: [0].python.version: expected string")
               for s in shown), shown
    assert any(s.startswith(f"{path}:10:21: [0].modules[1]: `two words'") for s in shown), shown
    path.write_text(path.read_text().replace("version: 3.10", "version: '3.10'"))
    with pytest.raises(InputError) as raised:
        read_services(str(path))
    shown = [str(p) for p in raised.value.problems]
    assert any(s.startswith(f"{path}:9:5: [0].python.packages: unknown property `packages'; "
                            "allowed here: requirements, version") for s in shown), shown


def test_environments_path_is_a_setting(tmp_path) -> None:
    (tmp_path / "steepy.yaml").write_text("environments:\n  path: /shared/envs\n")
    config = load_config(tmp_path, environ={})
    assert config.environments.path == "/shared/envs"
    assert AgentConfig.from_config(config, _plugins()).environments_dir == Path("/shared/envs")
    assert load_config(tmp_path, {"STEEPY_ENVIRONMENTS_PATH": "e"}).environments.path == "e"
    assert load_config(tmp_path / "none", environ={}).environments.path == ".steepy/envs"


def _plugins():
    from steepy.plugins.loaded import builtin_set
    return builtin_set()


def _python_exe(script: str, spec: PythonEnvironment, path: str = "python") -> Executable:
    words = [Argument(f"a{i}", ArgumentVariable(f"v{i}", v), "input")
             for i, v in enumerate(["-c", script])]
    return Executable("e", path, "calc", words, python=spec)


@pytest.mark.process
async def test_a_tool_runs_in_its_environment_built_once(tmp_path) -> None:
    envs = tmp_path / "envs"
    agent = LocalAgent("a", AgentConfig(log_dir=None, environments_path=str(envs)))
    exe = _python_exe("import idna, os, sys; print(sys.prefix); print(os.environ['VIRTUAL_ENV']);"
                      " print(idna.encode('bücher.example').decode())", SPEC)
    started = time.monotonic()
    first = await agent.execute(ProcessChain("c1", [exe]), submission_id="s1")
    built_s = time.monotonic() - started
    assert first.status == ProcessChainStatus.SUCCESS, first.error_message
    (directory,) = [p for p in envs.iterdir() if p.is_dir()]
    assert directory.name == SPEC.digest(os.uname().machine)
    assert first.attempts[0].last_lines == [str(directory), str(directory),
                                            "xn--bcher-kva.example"]
    made = directory.stat().st_mtime_ns
    started = time.monotonic()
    second = await agent.execute(ProcessChain("c2", [exe]), submission_id="s1")
    again_s = time.monotonic() - started
    assert second.status == ProcessChainStatus.SUCCESS, second.error_message
    assert directory.stat().st_mtime_ns == made and not list(envs.glob(".*-*"))
    print(f"built and ran in {built_s:.2f} s, ran again in {again_s:.2f} s")


@pytest.mark.process
async def test_a_program_the_requirements_install_is_found_in_the_environment(tmp_path) -> None:
    agent = LocalAgent("a", AgentConfig(log_dir=None, environments_path=str(tmp_path / "e")))
    words = [Argument("a0", ArgumentVariable("v0", "--version"), "input")]
    exe = Executable("e", "pyflakes", "lint", words,
                     python=PythonEnvironment(("pyflakes",), VERSION))
    outcome = await agent.execute(ProcessChain("c", [exe]), submission_id="s")
    assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message
    assert f"Python {VERSION}" in outcome.attempts[0].last_lines[-1]


_BUILD = """\
import asyncio, logging, os, sys
from pathlib import Path
from steepy.agent.pythonenv import python_environment
from steepy.model.software import PythonEnvironment
logging.basicConfig(level=logging.INFO, format="%(message)s")
spec = PythonEnvironment(("idna",), sys.argv[2])
print(asyncio.run(python_environment(spec, Path(sys.argv[1]), dict(os.environ))))
"""


@pytest.mark.process
def test_several_processes_build_one_environment_once(tmp_path) -> None:
    envs = tmp_path / "envs"
    builders = [subprocess.Popen([sys.executable, "-c", _BUILD, str(envs), VERSION],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for _ in range(3)]
    ran = [b.communicate(timeout=120) for b in builders]
    assert [b.returncode for b in builders] == [0, 0, 0], ran
    assert len({out for out, _ in ran}) == 1  # one directory for all
    said = "".join(err for _, err in ran)
    assert said.count("built Python environment") == 1, said
    assert sorted(p.name for p in envs.iterdir() if p.is_dir()) == [SPEC.digest(os.uname().machine)]


@pytest.mark.process
async def test_an_offline_host_gets_what_could_not_be_fetched(tmp_path) -> None:
    envs = tmp_path / "envs"
    offline = {"UV_INDEX_URL": "http://127.0.0.1:9/simple", "UV_OFFLINE": "1",
               "UV_CACHE_DIR": str(tmp_path / "empty-cache")}
    agent = LocalAgent("a", AgentConfig(log_dir=None, env=offline, environments_path=str(envs)))
    spec = PythonEnvironment(("idna==3.7",), VERSION)
    outcome = await agent.execute(ProcessChain("c", [_python_exe("import idna", spec)]),
                                  submission_id="s")
    assert outcome.status == ProcessChainStatus.ERROR
    message = outcome.error_message or ""
    assert message.startswith("Execution of service `calc' failed: its Python environment "
                              f"(Python {VERSION}; idna==3.7) could not be built:"), message
    assert "idna" in message.split("built:", 1)[1], message  # uv's own words name it
    assert outcome.attempts[0].message == message
    assert [p.name for p in envs.iterdir() if p.is_dir()] == []  # nothing half-built left


@pytest.mark.process
async def test_an_unwritable_environments_path_fails_the_attempt(tmp_path) -> None:
    (tmp_path / "file").write_text("")
    spec = PythonEnvironment(("idna",), VERSION)
    with pytest.raises(OSError):
        await python_environment(spec, tmp_path / "file" / "envs", dict(os.environ))
    agent = LocalAgent("a", AgentConfig(log_dir=None,
                                        environments_path=str(tmp_path / "file" / "envs")))
    outcome = await agent.execute(ProcessChain("c", [_python_exe("pass", spec)]),
                                  submission_id="s")
    assert outcome.status == ProcessChainStatus.ERROR
    assert "could not be built:\n[Errno 20] Not a directory" in (outcome.error_message or "")


def test_a_containers_service_asking_for_host_software_is_a_located_problem(tmp_path) -> None:
    from steepy.documents.loading import read_services
    from steepy.documents.validation_services import service_file_problems

    path = tmp_path / "s.yaml"
    path.write_text("""\
- {id: boxed, name: b, description: b, path: "python:3.12", runtime: docker, parameters: [],
   modules: [gcc/12]}
- {id: host, name: h, description: h, path: python, runtime: other, parameters: [],
   python: {requirements: [idna]}, modules: [gcc/12]}
""")
    found = read_services(str(path))
    (problem,) = service_file_problems(found, ["other", "docker"])
    assert str(problem) == (f"{path}:2:13: [0].modules: Service `boxed' has runtime `docker': "
                            "its container brings its own software, so `modules' does not "
                            "reach the tool. Install it in the image, or use runtime `other' "
                            "or `slurm'.")


@pytest.mark.process
async def test_a_cancel_ends_a_build_at_once(tmp_path) -> None:
    """uv waits on an index that accepts connections and never answers; the cancel ends uv,
    the attempt is cancelled, and nothing of the build is left."""
    import asyncio
    import socket

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)  # (the kernel completes connections; nobody ever reads them)
    try:
        envs = tmp_path / "envs"
        index = {"UV_INDEX_URL": f"http://127.0.0.1:{silent.getsockname()[1]}/simple",
                 "UV_CACHE_DIR": str(tmp_path / "cache"), "UV_HTTP_TIMEOUT": "300"}
        agent = LocalAgent("a", AgentConfig(log_dir=None, env=index, environments_path=str(envs)))
        exe = _python_exe("pass", PythonEnvironment(("idna==3.7",), VERSION))
        running = asyncio.ensure_future(agent.execute(ProcessChain("c", [exe]), submission_id="s"))
        end = time.monotonic() + 30
        while not (envs.is_dir() and list(envs.glob(".*-*/bin/python"))):
            assert time.monotonic() < end and not running.done()
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)  # (uv asks the index now)
        started = time.monotonic()
        agent.cancel("c")
        outcome = await asyncio.wait_for(running, 10)
        assert outcome.status == ProcessChainStatus.CANCELLED
        assert time.monotonic() - started < 5
        assert outcome.attempts[0].outcome == "CANCELLED"
        assert [p.name for p in envs.iterdir() if p.is_dir()] == []
    finally:
        silent.close()
