"""Every management command (submit, list, show, status, logs, cancel, retry, events) against
both backends -- the local database and a real `steepy serve` (`--server`) over the same
database -- with the same expectations: output and exit codes do not depend on the backend."""

from __future__ import annotations

import inspect
import json
import re
import time

import pytest
from click.testing import CliRunner

from steepy.cli import main
from steepy.api.backends import Backend, ChainState
from steepy.api.local import LocalBackend
from steepy.api.remote import RemoteBackend
from steepy.api.setup import LocalSetup
from steepy.cli.output import event_line
from tests.conftest import ROOT
from tests.engine.workflows import FAILS_ONCE, SLEEPY

BACKENDS = ("local", "remote")
EVENT = re.compile(r"^\S+  [a-z]+\.[A-Za-z]+ *( .*)?$")  # output.event_line's shape


@pytest.fixture(params=BACKENDS)
def steepy(request, server, monkeypatch):
    """`steepy ARGS' through one backend; checks the exit code."""
    monkeypatch.chdir(ROOT)
    for key in ("STEEPY_SERVER", "STEEPY_DB_URL", "STEEPY_HTTP_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    env = {"STEEPY_LOGS_PROCESSCHAINS_PATH": server.env["STEEPY_LOGS_PROCESSCHAINS_PATH"]}
    if request.param == "remote":
        env["STEEPY_SERVER"] = server.url
    else:
        env["STEEPY_DB_URL"] = server.env["STEEPY_DB_URL"]

    def run(*args: str, code: int = 0):
        result = CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)
        assert result.exit_code == code, (request.param, args, result.output)
        return result

    run.backend = request.param
    return run


def _submit(steepy, text: str) -> str:
    out = steepy("submit", text).stdout
    assert re.fullmatch(r"submitted \S+\n", out), out
    return out.split()[-1]


def _running(server, submission_id: str) -> None:
    end = time.monotonic() + 20
    while server.http.get(f"/workflows/{submission_id}").json()["runningProcessChains"] == 0:
        assert time.monotonic() < end, "the chain never started"
        time.sleep(0.05)


def test_a_submission_from_submit_to_retry(steepy, server, workflow_file) -> None:
    sid = _submit(steepy, workflow_file(FAILS_ONCE % workflow_file("", "state")))
    assert server.wait(sid)["status"] == "ERROR"

    listed = steepy("list", "--status", "error", "--size", "100").stdout.splitlines()
    assert listed[0] == "id\tstatus\tname\tchains done\tstarted\tended"
    row = next(line.split("\t") for line in listed if line.startswith(sid))
    assert row[1:4] == ["ERROR", "fails once, then works", "1/1"] and row[4] and row[5]

    shown = steepy("show", sid).stdout
    assert shown.startswith(f"submission {sid}  ERROR  fails once, then works\n")
    assert ("  chains: 1 in all, 0 succeeded, 1 failed, 0 cancelled, 0 running, 0 paused\n"
            in shown)
    assert steepy("status", sid).stdout == shown
    document = json.loads(steepy("show", sid, "--json").stdout)
    assert document["id"] == sid and document["status"] == "ERROR"
    chain_id = document["processChains"][0]["id"]
    assert f"\n{chain_id}\tERROR\t1\tf\n" in shown

    chain = steepy("show", chain_id).stdout
    assert chain.startswith(f"process chain {chain_id}  ERROR  (submission {sid})\n  run 1: "
                            "ERROR on ")
    assert "    f attempt 1: FAILED exit code 1" in chain
    assert json.loads(steepy("status", chain_id, "--json").stdout)["status"] == "ERROR"

    assert "failing on purpose" in steepy("logs", chain_id).stdout
    assert steepy("logs", chain_id, "--run", "1").stdout == steepy("logs", chain_id).stdout
    missing = steepy("logs", chain_id, "--run", "7", code=2).stderr
    assert missing.startswith(f"No log of run 7 of `{chain_id}' ")

    events = steepy("events", sid).stdout.splitlines()
    assert all(EVENT.match(line) for line in events), events
    assert any(" submission.status " in line and "status=ERROR" in line for line in events)

    assert steepy("retry", sid).stdout == (f"submission {sid}: RUNNING again (was ERROR); a "
                                           "worker picks it up\n")
    assert server.wait(sid)["status"] == "SUCCESS"
    assert steepy("retry", sid, code=2).stderr == (
        f"Submission `{sid}' is SUCCESS; only ERROR, PARTIAL_SUCCESS and CANCELLED "
        "submissions can be retried.\n")
    assert f"process chain {chain_id}  SUCCESS" in steepy("show", chain_id).stdout
    assert "  run 2: SUCCESS on " in steepy("show", chain_id).stdout
    # the latest run by default; --follow of a finished chain ends with its log
    assert steepy("logs", chain_id, "--follow").stdout == steepy("logs", chain_id, "--run",
                                                                 "2").stdout
    later = steepy("events", sid).stdout.splitlines()
    assert later[:len(events)] == events and any(" submission.retried " in e for e in later)


def test_cancel_a_chain_then_its_submission(steepy, server, workflow_file) -> None:
    sid = _submit(steepy, workflow_file(SLEEPY))
    _running(server, sid)
    chain_id = json.loads(steepy("show", sid, "--json").stdout)["processChains"][0]["id"]
    assert steepy("logs", chain_id, "--run", "1").stdout == ""  # the tool prints nothing
    assert steepy("cancel", chain_id).stdout == (f"process chain {chain_id}: cancel requested "
                                                 "(was RUNNING)\n")
    status = server.wait(sid)["status"]
    assert status in ("CANCELLED", "ERROR")
    assert steepy("cancel", sid, code=2).stderr == (f"Submission `{sid}' has already finished "
                                                    f"({status}); nothing to cancel.\n")


def test_cancel_a_running_submission(steepy, server, workflow_file) -> None:
    sid = _submit(steepy, workflow_file(SLEEPY))
    _running(server, sid)
    assert steepy("cancel", sid).stdout == (f"submission {sid}: cancel requested (was RUNNING; "
                                            "1 running chain(s) are being stopped)\n")
    assert server.wait(sid)["status"] == "CANCELLED"
    assert "  chains: 1 in all, 0 succeeded, 0 failed, 1 cancelled" in steepy("show", sid).stdout


@pytest.mark.parametrize("args, message", [
    (("show", "nosuch"), "No submission or process chain with the id `nosuch'."),
    (("status", "nosuch", "--json"), "No submission or process chain with the id `nosuch'."),
    (("cancel", "nosuch"), "No submission or process chain with the id `nosuch'."),
    (("retry", "nosuch"), "No submission with the id `nosuch'."),
    (("events", "nosuch"), "No submission with the id `nosuch'."),
    (("logs", "nosuch"), "No process chain with the id `nosuch'."),
])
def test_unknown_ids(steepy, args, message) -> None:
    result = steepy(*args, code=2)
    assert (result.stdout, result.stderr) == ("", message + "\n")


def test_list_pages_and_refuses_an_unknown_status(steepy, server, workflow_file) -> None:
    for _ in range(2):  # two at least, whichever tests of the file ran before
        sid = _submit(steepy, workflow_file(SLEEPY))
        server.http.put(f"/workflows/{sid}", json={"status": "CANCELLED"})
    page = steepy("list", "--size", "1")
    lines = page.stdout.splitlines()
    assert len(lines) == 2 and lines[1].startswith(f"{sid}\t")
    assert re.fullmatch(r"\((\d+) in all; --offset 1 for more\)\n", page.stderr)
    assert steepy("list", "--offset", "100000").stdout == (
        "id\tstatus\tname\tchains done\tstarted\tended\n")
    refused = steepy("list", "--status", "finished", code=2)
    assert "Invalid value for '--status'" in refused.stderr


def test_submit_reports_every_problem_located(steepy, workflow_file) -> None:
    path = workflow_file("api: 4.7.0\nactions:\n  - type: execute\n    service: nope\n")
    result = steepy("submit", path, code=2)
    assert result.stdout == "" and result.stderr.startswith(f"{path}:4:14: actions[0].service: ")
    assert result.stderr.endswith("\n1 problem in 1 file\n")
    missing = steepy("submit", "no/such/file.yaml", code=2)
    assert missing.stderr.startswith("no/such/file.yaml")


def test_both_backends_implement_the_protocol() -> None:
    wanted = {name: inspect.signature(member) for name, member in vars(Backend).items()
              if inspect.isfunction(member) and not name.startswith("_")}
    assert len(wanted) >= 9
    for implementation in (LocalBackend, RemoteBackend):
        found = {name: inspect.signature(getattr(implementation, name)) for name in wanted}
        assert found == wanted, implementation


def test_both_backends_answer_alike(server, workflow_file, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("STEEPY_HTTP_TOKEN", raising=False)
    monkeypatch.setenv("STEEPY_LOGS_PROCESSCHAINS_PATH",
                       server.env["STEEPY_LOGS_PROCESSCHAINS_PATH"])
    local = LocalBackend(server.env["STEEPY_DB_URL"], LocalSetup())
    with RemoteBackend(server.url) as remote:
        sid = remote.submit(workflow_file(FAILS_ONCE % workflow_file("", "state")), (), ())
        server.wait(sid)
        for backend in (local, remote):
            assert backend.submissions(None, 3, 0) == remote.submissions(None, 3, 0)
            assert backend.submissions("ERROR", -1, 0) == local.submissions("ERROR", -1, 0)
        document = local.document(sid)
        assert remote.document(sid) == document and document["status"] == "ERROR"
        chain_id = document["processChains"][0]["id"]
        assert remote.document(chain_id) == local.document(chain_id)
        assert remote.chain(chain_id) == local.chain(chain_id) == ChainState("ERROR", 1)
        assert remote.log(chain_id, 1, 0) == local.log(chain_id, 1, 0) != b""
        assert remote.log(chain_id, 1, 10) == local.log(chain_id, 1, 10)
        size = len(local.log(chain_id, 1, 0))
        assert remote.log(chain_id, 1, size) == local.log(chain_id, 1, size) == b""
        assert remote.log(chain_id, 2, 0) is local.log(chain_id, 2, 0) is None
        assert remote.events(sid) == local.events(sid)
        assert [event_line(e) for e in remote.events(sid)] == [event_line(e) for e in
                                                                local.events(sid)]
        for backend in (local, remote):
            assert backend.document("nosuch") is None and backend.chain("nosuch") is None
            assert backend.events("nosuch") is None and backend.retry("nosuch") is None
            assert backend.cancel("nosuch") is None
