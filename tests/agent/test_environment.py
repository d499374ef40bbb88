"""Secrets stay with the engine (issue 24): a tool gets the environment steepy was started
with minus steepy's own configuration (STEEPY_*, STEEP_*: the HTTP token, the database URL
with its password), plus its service's `passEnvironment' and `environment', plus the
attempt's STEEPY_* variables; a database URL is shown with its password masked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from steepy.agent import AgentConfig, LocalAgent
from steepy.agent.environment import (ENV_PREFIXES, attempt_environment, engine_environment,
                                      environment)
from steepy.generator.executables import ExecutableBuilder
from steepy.model.processchain import Argument, ArgumentVariable, Executable, ProcessChain
from steepy.model.service import Service
from steepy.model.submission import ProcessChainStatus
from tests.conftest import ROOT

TOKEN = "tok-4f9a1c2e-never-in-a-tool"
PASSWORD = "pw-7d3b-never-shown"
DB_URL = f"postgresql+psycopg://steepy:{PASSWORD}@db.invalid:5432/steepy"


def test_the_prefixes_are_those_the_configuration_reads() -> None:
    from steepy.config.located import ENV_PREFIXES as CONFIG_PREFIXES

    assert ENV_PREFIXES == CONFIG_PREFIXES


def test_the_engine_environment_leaves_out_steepys_own_settings(monkeypatch) -> None:
    monkeypatch.setenv("STEEPY_HTTP_TOKEN", TOKEN)
    monkeypatch.setenv("STEEPY_DB_URL", DB_URL)
    monkeypatch.setenv("STEEP_HTTP_TOKEN", TOKEN)  # Steep's spelling configures steepy too
    monkeypatch.setenv("STEEPY_AGENT_INSTANCES", "4")
    monkeypatch.setenv("TOOL_SETTING", "kept")
    base = engine_environment()
    assert not [k for k in base if k.startswith(("STEEPY_", "STEEP_"))]
    assert base["TOOL_SETTING"] == "kept" and base["PATH"] == os.environ["PATH"]
    assert TOKEN not in json.dumps(base) and PASSWORD not in json.dumps(base)
    assert environment()["STEEPY_HTTP_TOKEN"] == TOKEN  # the engine's own view keeps them
    base["SCRATCH"] = "mine"  # each call gets a copy of its own
    assert "SCRATCH" not in engine_environment()
    monkeypatch.setenv("STEEPY_HTTP_TOKEN", "changed")  # follows changes (cached until then)
    monkeypatch.setenv("TOOL_SETTING", "changed")
    assert engine_environment()["TOOL_SETTING"] == "changed"
    assert "STEEPY_HTTP_TOKEN" not in engine_environment()


def test_an_attempt_gets_what_its_service_declares(monkeypatch) -> None:
    monkeypatch.setenv("STEEPY_FOR_THE_TOOL", "passed on purpose")
    monkeypatch.setenv("SHARED_NAME", "from the engine")
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    base = {**engine_environment(), "SHARED_NAME": "from config.env"}
    exe = Executable("e", "tool", "svc", environment={"GREETING": "hello", "PATH": "/only"},
                     pass_environment=["STEEPY_FOR_THE_TOOL", "SHARED_NAME", "NOT_SET_ANYWHERE"])
    env = attempt_environment(base, exe)
    assert env["GREETING"] == "hello" and env["PATH"] == "/only"  # `environment' wins
    assert env["STEEPY_FOR_THE_TOOL"] == "passed on purpose"  # the filter would drop it
    assert env["SHARED_NAME"] == "from config.env"  # already in the base: kept as it is
    assert "NOT_SET_ANYWHERE" not in env
    assert "STEEPY_FOR_THE_TOOL" not in base and base["PATH"] != "/only"  # a fresh dict
    plain = attempt_environment(base, Executable("p", "tool", "svc"))
    assert plain == base and plain is not base


def test_environment_keys_survive_the_registry_and_are_left_out_when_empty() -> None:
    exe = Executable("e", "tool", "svc", environment={"A": "1", "B": "two"},
                     pass_environment=["HOME", "STEEPY_X"])
    data = exe.to_json()
    assert data["environment"] == {"A": "1", "B": "two"}
    assert data["passEnvironment"] == ["HOME", "STEEPY_X"]
    assert Executable.from_json(json.loads(json.dumps(data))) == exe
    plain = Executable("e", "tool", "svc").to_json()  # Steep's documents are unchanged
    assert "environment" not in plain and "passEnvironment" not in plain
    service = Service.from_json({"id": "s", "name": "", "description": "", "path": "p",
                                 "runtime": "other", "parameters": [],
                                 "environment": {"N": 4, "ON": True, "T": "x"},
                                 "passEnvironment": ["HOME"]})
    assert service.environment == {"N": "4", "ON": "true", "T": "x"}
    assert Service.from_json(service.to_json()) == service
    assert "environment" not in Service("s", "", "", "p", "other").to_json()


def test_the_generator_carries_them_onto_the_executable() -> None:
    from steepy.generator.nodes import ExecNode

    service = Service("s", "", "", "/bin/tool", "other", environment={"A": "1"},
                      pass_environment=["HOME"])
    ids = iter(f"id{i}" for i in range(100))
    builder = ExecutableBuilder("/tmp", "/out", {"s": service}, lambda: next(ids))
    exe, _ = builder.build(ExecNode("a", "s", [], [], []), lambda var: (None, False))
    assert exe.environment == {"A": "1"} and exe.pass_environment == ["HOME"]
    exe.environment["B"] = "2"  # its own copy, not the service's
    assert service.environment == {"A": "1"}


def _write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def test_bad_names_and_values_are_located(tmp_path) -> None:
    from steepy.errors import InputError
    from steepy.documents.loading import read_services

    path = _write(tmp_path / "s.yaml", """\
- id: s
  name: s
  description: s
  path: /bin/tool
  runtime: other
  parameters: []
  environment:
    GOOD: 1
    NESTED: {a: 1}
  passEnvironment: [HOME, bad-name, STEEPY_ATTEMPT]
""")
    with pytest.raises(InputError) as raised:
        read_services(path)
    shown = [str(p) for p in raised.value.problems]
    assert any(s.startswith(f"{path}:9:13: [0].environment.NESTED: expected string")
               for s in shown), shown
    assert any(s.startswith(f"{path}:10:27: [0].passEnvironment[1]: `bad-name' does not have "
                            "the expected form") for s in shown), shown
    # the attempt's own variables are steepy's to set
    assert any(s.startswith(f"{path}:10:37: [0].passEnvironment[2]: `STEEPY_ATTEMPT'")
               for s in shown), shown
    _write(tmp_path / "s.yaml", (tmp_path / "s.yaml").read_text().replace(
        "NESTED: {a: 1}", "1BAD: x").replace("bad-name, STEEPY_ATTEMPT", "USER"))
    with pytest.raises(InputError) as raised:
        read_services(path)
    (problem,) = raised.value.problems
    assert str(problem).startswith(f"{path}:8:5: [0].environment: `1BAD' does not have"), problem


# -- through the agent and the real engine ---------------------------------------------------

def _script_exe(script: str, **declared) -> Executable:
    words = [Argument(f"a{i}", ArgumentVariable(f"v{i}", v), "input")
             for i, v in enumerate(["-c", script])]
    return Executable("e", "/bin/sh", "tool", words, **declared)


@pytest.mark.process
async def test_a_local_tool_gets_no_secret(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("STEEPY_HTTP_TOKEN", TOKEN)
    monkeypatch.setenv("STEEPY_DB_URL", DB_URL)
    monkeypatch.setenv("STEEPY_FOR_THE_TOOL", "passed on purpose")
    from steepy.runtimes.other import OtherRuntime

    seen = []  # what a runtime (a plugin's, too) is told of the attempt's environment
    command = OtherRuntime.command
    monkeypatch.setattr(OtherRuntime, "command", lambda self, exe, context: (
        seen.append(dict(context.env)), command(self, exe, context))[1])
    agent = LocalAgent("a", AgentConfig(log_dir=tmp_path / "logs", env={"FROM_CONFIG": "yes"}))
    exe = _script_exe("env | sort", environment={"GREETING": "hello"},
                      pass_environment=["STEEPY_FOR_THE_TOOL"])
    outcome = await agent.execute(ProcessChain("c", [exe]), submission_id="s1")
    assert outcome.status == ProcessChainStatus.SUCCESS, outcome.error_message
    lines = outcome.attempts[0].last_lines
    shown = "\n".join(lines)
    assert TOKEN not in shown and PASSWORD not in shown
    assert "GREETING=hello" in lines and "FROM_CONFIG=yes" in lines
    assert "STEEPY_FOR_THE_TOOL=passed on purpose" in lines
    assert {"STEEPY_ATTEMPT=1", "STEEPY_SUBMISSION_ID=s1", "STEEPY_PROCESS_CHAIN_ID=c",
            "STEEPY_EXECUTABLE_ID=e", "STEEPY_RUN_NUMBER=1", "STEEPY_LAST_EXIT_CODE="} <= set(lines)
    (told,) = seen
    assert told["GREETING"] == "hello" and told["STEEPY_ATTEMPT"] == "1"
    assert TOKEN not in json.dumps(told) and PASSWORD not in json.dumps(told)
    steepy_names = {line.split("=", 1)[0] for line in lines if line.startswith("STEEP")}
    assert steepy_names == {"STEEPY_ATTEMPT", "STEEPY_SUBMISSION_ID", "STEEPY_PROCESS_CHAIN_ID",
                            "STEEPY_EXECUTABLE_ID", "STEEPY_RUN_NUMBER", "STEEPY_LAST_EXIT_CODE",
                            "STEEPY_LAST_FAILED_AT", "STEEPY_LAST_MESSAGE", "STEEPY_SIGNAL_FILE",
                            "STEEPY_FOR_THE_TOOL"}


SERVICES = """\
- id: printenv
  name: Print the environment
  description: prints its environment, then fails (so that it is in the error message too)
  path: /bin/sh
  runtime: other
  parameters:
    - id: script
      name: script
      description: what the shell runs
      type: input
      cardinality: 1..1
      label: -c
      default: env; exit 3
  environment:
    GREETING: hello from the service
    COUNT: 4
  passEnvironment: [STEEPY_FOR_THE_TOOL]
"""

WORKFLOW = """\
api: 4.7.0
name: prints its environment
actions:
  - {id: show, type: execute, service: printenv}
"""


@pytest.mark.process
def test_steepy_run_keeps_the_token_and_the_database_password_from_the_tool(tmp_path) -> None:
    """`steepy run' with STEEPY_HTTP_TOKEN and a PostgreSQL STEEPY_DB_URL (`--db' names the
    database actually used): neither reaches the tool, its log, its error message, the
    timeline or the command's output; what the service declares does."""
    db = f"sqlite:///{tmp_path / 'steepy.db'}"
    env = dict(os.environ, STEEPY_TMPPATH=str(tmp_path / "tmp"),
               STEEPY_OUTPATH=str(tmp_path / "out"),
               STEEPY_LOGS_PROCESSCHAINS_PATH=str(tmp_path / "logs"),
               STEEPY_HTTP_TOKEN=TOKEN, STEEPY_DB_URL=DB_URL, STEEP_HTTP_TOKEN=TOKEN,
               STEEPY_FOR_THE_TOOL="passed on purpose", STEEPY_AGENT_KILLGRACEPERIOD="1s")

    def steepy(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "steepy.cli", *args], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=120)

    services = _write(tmp_path / "services.yaml", SERVICES)
    ran = steepy("run", _write(tmp_path / "w.yaml", WORKFLOW), "--services", services,
                 "--db", db, "--agents", "1", "--json")
    assert ran.returncode == 1, ran.stdout + ran.stderr  # the tool exits with 3 on purpose
    document = json.loads(ran.stdout)
    (chain,) = document["processChains"]
    message = chain["runs"][0]["errorMessage"] if "runs" in chain else chain["errorMessage"]
    assert "exited with code 3" in message and "GREETING=hello from the service" in message
    logs = "\n".join(p.read_text() for p in (tmp_path / "logs").rglob("*") if p.is_file())
    for expected in ("GREETING=hello from the service", "COUNT=4",
                     "STEEPY_FOR_THE_TOOL=passed on purpose", "STEEPY_ATTEMPT=1"):
        assert expected in logs, logs
    assert "STEEPY_LOGS_PROCESSCHAINS_PATH" not in logs and "STEEPY_TMPPATH" not in logs
    timeline = steepy("events", document["id"], "--db", db)
    assert timeline.returncode == 0, timeline.stderr
    assert "exited with code 3" in timeline.stdout
    for shown in (logs, ran.stdout, ran.stderr, timeline.stdout, timeline.stderr):
        assert TOKEN not in shown and PASSWORD not in shown


# -- a database URL is shown with its password masked ---------------------------------------

def test_a_database_url_is_masked() -> None:
    from steepy.registry.failures import masked as masked_url

    assert masked_url(DB_URL) == "postgresql+psycopg://steepy:***@db.invalid:5432/steepy"
    assert masked_url("postgresql://u:secret@h:port/db") == "postgresql://u:***@h:port/db"
    assert masked_url("sqlite:///x.db") == "sqlite:///x.db"
    assert masked_url("postgresql://u@h/db") == "postgresql://u@h/db"


@pytest.mark.process
@pytest.mark.parametrize("url", [f"mysql://steepy:{PASSWORD}@db.invalid/steepy",
                                 f"postgresql+psycopg://steepy:{PASSWORD}@db.invalid:port/x"])
def test_a_database_url_steepy_cannot_use_is_shown_without_its_password(tmp_path, url) -> None:
    from steepy.errors import SteepyError
    from steepy.registry.database import open_engine

    with pytest.raises(SteepyError) as raised:
        open_engine(url)
    assert PASSWORD not in str(raised.value) and "steepy:***@db.invalid" in str(raised.value)
    done = subprocess.run([sys.executable, "-m", "steepy.cli", "list", "--db", url], cwd=tmp_path,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode != 0 and "steepy:***@db.invalid" in done.stderr, done.stderr
    assert PASSWORD not in done.stdout + done.stderr
