"""The CLI's `--server` mode (STEEPY_SERVER): the same output as against the database."""

from __future__ import annotations

import json
import time

import pytest
from click.testing import CliRunner

from steepy.cli import main
from tests.conftest import ROOT
from tests.engine.workflows import FAILS_ONCE, SLEEPY


@pytest.fixture
def cli(server, monkeypatch):
    monkeypatch.chdir(ROOT)
    for key in ("STEEPY_SERVER", "STEEPY_DB_URL", "STEEPY_HTTP_TOKEN"):
        monkeypatch.delenv(key, raising=False)

    def run(*args: str, remote: bool = True, code: int = 0):
        env = ({"STEEPY_SERVER": server.url} if remote
               else {"STEEPY_DB_URL": server.env["STEEPY_DB_URL"]})
        env["STEEPY_LOGS_PROCESSCHAINS_PATH"] = server.env["STEEPY_LOGS_PROCESSCHAINS_PATH"]
        result = CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)
        assert result.exit_code == code, result.output
        return result

    return run


def test_submit_list_show_logs_events_through_a_server(cli, server, workflow_file) -> None:
    sid = cli("submit", workflow_file(FAILS_ONCE % (workflow_file("", "state")))).stdout.split()[-1]
    server.wait(sid)
    for args in (("list",), ("show", sid), ("show", sid, "--json"), ("events", sid)):
        assert cli(*args).stdout == cli(*args, remote=False).stdout, args
    chain_id = json.loads(cli("show", sid, "--json").stdout)["processChains"][0]["id"]
    for args in (("show", chain_id), ("logs", chain_id), ("logs", chain_id, "--run", "1")):
        assert cli(*args).stdout == cli(*args, remote=False).stdout, args
    assert "failing on purpose" in cli("logs", chain_id).stdout
    assert "RUNNING again (was ERROR)" in cli("retry", sid).stdout
    server.wait(sid)
    refused = cli("retry", sid, code=2)
    assert "only ERROR, PARTIAL_SUCCESS and CANCELLED" in refused.stderr
    assert cli("show", "nosuch", code=2).stderr == cli("show", "nosuch", remote=False,
                                                      code=2).stderr


def test_submit_reports_problems_like_the_local_command(cli, workflow_file) -> None:
    path = workflow_file("api: 4.7.0\nactions:\n  - type: execute\n    service: nope\n")
    remote = cli("submit", path, code=2)
    local = cli("submit", path, "--services", "services", remote=False, code=2)
    assert remote.stderr == local.stderr and f"{path}:4:14: actions[0].service" in remote.stderr


def test_cancel_through_a_server(cli, server, workflow_file) -> None:
    sid = cli("submit", workflow_file(SLEEPY)).stdout.split()[-1]
    end = time.monotonic() + 20
    while server.http.get(f"/workflows/{sid}").json()["runningProcessChains"] == 0:
        assert time.monotonic() < end
        time.sleep(0.05)
    out = cli("cancel", sid).stdout
    assert out == (f"submission {sid}: cancel requested (was RUNNING; 1 running chain(s) are "
                   "being stopped)\n")
    assert server.wait(sid)["status"] == "CANCELLED"
    assert "has already finished (CANCELLED)" in cli("cancel", sid, code=2).stderr
    assert "No submission or process chain" in cli("cancel", "nosuch", code=2).stderr


def test_an_unreachable_server_is_a_clear_error(cli, monkeypatch) -> None:
    """Exit code 4, as docs/reference/exit-codes.md says of a server that cannot be reached
    (it was 2, "bad input: nothing was stored", which a script may take for its own
    mistake; review, session 49)."""
    result = CliRunner().invoke(main, ["list", "--server", "http://127.0.0.1:9"],
                                catch_exceptions=False)
    assert result.exit_code == 4 and "Cannot reach the steepy server" in result.stderr


NAP = """
api: 4.7.0
name: nap
vars:
  - {id: seconds, value: 30}
actions:
  - {id: nap, type: execute, service: sleep, inputs: [{id: seconds, var: seconds}]}
"""


def test_vars_wait_and_submit_wait_through_a_server(cli, workflow_file) -> None:
    path = workflow_file(NAP)
    done = cli("submit", path, "--var", "seconds=0.05", "--wait").stdout.splitlines()
    fine = done[0].split()[-1]
    assert done[1] == f"submission {fine}: SUCCESS"
    failing = cli("submit", path, "--var", "seconds=nope").stdout.split()[-1]
    sleeping = cli("submit", path).stdout.split()[-1]
    assert json.loads(cli("show", failing, "--json").stdout)["vars"] == {"seconds": "nope"}
    both = cli("wait", fine, failing, code=1).stdout.splitlines()  # the highest code
    assert both[0] == f"submission {fine}: SUCCESS"
    assert both[1].startswith(f"submission {failing}: ERROR (")
    assert "No submission with the id `nosuch'" in cli("wait", sleeping, "nosuch", code=2).stderr
    cli("cancel", sleeping)
    assert cli("wait", sleeping, code=3).stdout == f"submission {sleeping}: CANCELLED\n"
    typo = cli("submit", path, "--var", "secnds=1", code=2).stderr  # the server's problem
    assert typo.startswith("--var secnds: the workflow has no variable `secnds' that can be "
                           "set; did you mean `seconds'?\n")
