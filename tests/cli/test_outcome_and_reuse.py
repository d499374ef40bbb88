"""How a submission's end is printed, one text for `steepy run`, `steepy wait` and `submit
--wait` (steepy/cli/outcome.py): what failed (service, exit code, last output), and with
--resume how many chains were reused, also when none was. `plan --resume --var`, and `logs`
of a reused chain (the log of the run it reused). Session 37's new-user findings 1-3, 6.
The tools here are real processes (`sh`), run by `steepy run` in-process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from steepy.cli import main

pytestmark = pytest.mark.process

SERVICES = """\
- id: sh
  name: Shell
  description: sh -c SCRIPT sh ARG OUT
  path: sh
  runtime: other
  parameters:
    - {id: script, name: Script, description: s, type: input, label: -c, cardinality: 1..1,
       dataType: string}
    - {id: zero, name: Zero, description: z, type: input, cardinality: 1..1,
       dataType: string, default: sh}
    - {id: arg, name: Arg, description: a, type: input, cardinality: 1..1, dataType: string}
    - {id: out, name: Out, description: o, type: output, cardinality: 1..1,
       dataType: string, fileSuffix: .txt}
"""
WORKFLOW = """\
api: 4.7.0
name: %s
vars:
  - id: script
    value: %s
  - id: who
    value: world
  - id: greeting
actions:
  - type: execute
    service: sh
    inputs: [{id: script, var: script}, {id: arg, var: who}]
    outputs: [{id: out, var: greeting, store: true}]
"""
GREET = WORKFLOW % ("greet", """'echo "hello $1" | tee "$2"'""")
FAILS = WORKFLOW % ("fails", """'echo starting; echo "no such input" >&2; exit 7'""")


@pytest.fixture
def here(tmp_path: Path, monkeypatch, no_steepy_variables) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "services.yaml").write_text(SERVICES)
    (tmp_path / "greet.yaml").write_text(GREET)
    (tmp_path / "fails.yaml").write_text(FAILS)
    return tmp_path


def steepy(*args: str, code: int = 0):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result


def _run(*args: str, code: int = 0):
    return steepy("run", *args, "-s", "services.yaml", code=code)


def _id(result) -> str:
    return result.stdout.split()[1]  # `submission ID' is the first line


def _summary(stderr: str) -> list[str]:
    """The failure summary's lines (from the first `chain ... failed:')."""
    lines = stderr.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("chain "))
    return lines[first:]


def test_run_and_wait_end_with_the_same_lines(here: Path) -> None:
    first = _run("greet.yaml", "--resume")
    assert first.stdout.endswith(f"submission {_id(first)}: SUCCESS\n1 chain, 0 reused\n")
    plain = _run("greet.yaml")  # no --resume, nothing reused: no such line
    assert plain.stdout.endswith(f"submission {_id(plain)}: SUCCESS\n")
    again = _run("greet.yaml", "--resume")
    end = f"submission {_id(again)}: SUCCESS\n1 chain, 1 reused\n"
    assert again.stdout.endswith(end)
    assert steepy("wait", _id(again)).stdout == end
    assert steepy("wait", _id(again), _id(again)).stdout == end  # (given twice: one line)

    failed = _run("fails.yaml", code=1)
    summary = _summary(failed.stderr)
    chain = summary[0].split()[1]
    assert summary[0].startswith(f"chain {chain} failed: Execution of service `sh' failed: ")
    assert summary[0].endswith("exited with code 7. Last output:")
    assert summary[1:] == ["  starting", "  no such input",
                           f"`steepy logs {chain}' prints a chain's whole output."]
    waited = steepy("wait", _id(failed), code=1)
    assert waited.stdout == f"submission {_id(failed)}: ERROR (All process chains failed)\n"
    assert _summary(waited.stderr) == summary

    from tests.http.conftest import Server  # the same through a server (`--server')

    server = Server(here, "--no-agents",
                    env={"STEEPY_DB_URL": f"sqlite:///{here / '.steepy' / 'steepy.db'}"})
    try:
        for sid, code in ((_id(again), 0), (_id(failed), 1)):
            local = steepy("wait", sid, code=code)
            remote = steepy("wait", sid, "--server", server.url, code=code)
            assert (remote.stdout, remote.stderr) == (local.stdout, local.stderr)
    finally:
        assert server.stop() == 0


def test_plan_resume_takes_var_as_run_does(here: Path) -> None:
    _run("greet.yaml", "--resume")
    plan = ("plan", "greet.yaml", "-s", "services.yaml", "--resume")
    assert steepy(*plan).stdout.endswith("1 chain: 0 to run, 1 reused\n")
    changed = steepy(*plan, "--var", "who=there")
    assert changed.stdout.endswith("1 chain: 1 to run, 0 reused\n")
    same = steepy(*plan, "--var", "who=world")
    assert same.stdout.endswith("1 chain: 0 to run, 1 reused\n")


def test_logs_of_a_reused_chain_print_the_run_it_reused(here: Path) -> None:
    first = _id(_run("greet.yaml", "--resume"))
    second = _id(_run("greet.yaml", "--resume"))
    [reused] = json.loads(steepy("show", second, "--json").stdout)["processChains"]
    [source] = json.loads(steepy("show", first, "--json").stdout)["processChains"]
    assert reused["reused"]["processChainId"] == source["id"]

    logs = steepy("logs", reused["id"])
    assert logs.stdout == "hello world\n"
    assert logs.stderr == (f"process chain {reused['id']} reused the work of process chain "
                           f"{source['id']} (submission {first}); its log of run 1:\n")

    for log in (here / "logs").rglob(f"{source['id']}*.log"):
        log.unlink()
    gone = steepy("logs", reused["id"])  # the id is right: exit 0
    assert gone.stdout == ""
    assert gone.stderr.splitlines()[1].startswith(f"No log of run 1 of `{source['id']}' at ")

    from steepy.registry import open_registry

    registry = open_registry(f"sqlite:///{here / '.steepy' / 'steepy.db'}")
    registry.housekeeping.delete_submissions([first])
    registry.close()
    deleted = steepy("logs", reused["id"])
    assert deleted.stderr == (f"Process chain `{reused['id']}' reused the work of process "
                              f"chain {source['id']} (submission {first}), which is no longer "
                              "stored: its log is gone.\n")
