"""In-process, nothing run: `steepy wait` says once that no worker or server is there to take
an ACCEPTED submission (and keeps waiting); `plan --resume` where there is no database says
so; `plan --var/--vars` are checked as `run` checks them; `logs` of a run that printed
nothing ends with exit code 0 (the id was right). Session 37's new-user findings 1, 2, 4, 5."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path
from typing import Callable

import pytest
from click.testing import CliRunner

from steepy.cli import main, waiting
from steepy.model.processchain import ProcessChain
from steepy.model.submission import ProcessChainStatus as CS
from steepy.registry import open_registry
from tests.engine.test_engine import _submit
from tests.registry.chains import store_chains

SERVICES = """\
- id: echo
  name: Echo
  description: prints its words
  path: echo
  runtime: other
  parameters:
    - {id: words, name: Words, description: w, type: input, cardinality: 1..1,
       dataType: string}
"""
WORKFLOW = """\
api: 4.7.0
name: greet
vars:
  - id: who
    value: world
actions:
  - type: execute
    service: echo
    inputs: [{id: words, var: who}]
"""
HINT = ("no steepy worker or server is running against this database: start `steepy worker' "
        "(the submission waits, ACCEPTED)")


@pytest.fixture
def here(tmp_path: Path, monkeypatch, no_steepy_variables) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "services.yaml").write_text(SERVICES)
    (tmp_path / "wf.yaml").write_text(WORKFLOW)
    return tmp_path


def steepy(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _wait_then_cancel(db: str, submission_id: str, after_s: float):
    """`steepy wait ID`, while another thread cancels the submission `after_s` later."""
    def cancel() -> None:
        time.sleep(after_s)
        other = open_registry(db)
        other.requests.cancel_submission(submission_id)
        other.close()

    thread = threading.Thread(target=cancel)
    thread.start()
    try:
        return steepy("wait", submission_id, "--db", db)
    finally:
        thread.join()


def test_wait_says_once_that_nothing_takes_an_accepted_submission(here, monkeypatch) -> None:
    monkeypatch.setattr(waiting, "UNTAKEN_S", 0.1)
    db = f"sqlite:///{here / 'steepy.db'}"
    registry = open_registry(db)
    alone = _submit(registry, WORKFLOW)
    result = _wait_then_cancel(db, alone, 1.0)  # ten looks: one line
    assert result.exit_code == 3, result.output  # it kept waiting, to the end
    assert result.stderr == f"submission {alone}: {HINT}\n"
    assert result.stdout == f"submission {alone}: CANCELLED\n"

    registry.leases.heartbeat("live-engine", [{"id": "agent-1"}], 60)  # a worker is there
    taken_later = _submit(registry, WORKFLOW)
    result = _wait_then_cancel(db, taken_later, 0.5)
    assert result.exit_code == 3 and result.stderr == "", result.output
    registry.close()


def test_plan_resume_without_a_database_says_so_and_plans(here: Path) -> None:
    result = steepy("plan", "wf.yaml", "-s", "services.yaml", "--resume")
    assert result.exit_code == 0, result.output
    assert result.stderr == (f"No database at {here / '.steepy' / 'steepy.db'}: nothing can "
                             "be reused, every chain would run.\n")
    assert result.stdout.endswith("1 chain: 1 to run, 0 reused\n")
    assert not (here / ".steepy").exists()


def test_plan_takes_var_and_vars_checked_as_run_checks_them(here: Path) -> None:
    (here / "values.yaml").write_text("who: file\n")
    given = steepy("plan", "wf.yaml", "-s", "services.yaml", "--vars", "values.yaml")
    assert given.exit_code == 0 and "echo file" in given.stdout, given.output
    given = steepy("plan", "wf.yaml", "-s", "services.yaml", "--vars", "values.yaml",
                   "--var", "who=option")  # the option wins
    assert "echo option" in given.stdout and "echo file" not in given.stdout
    for command in ("plan", "run"):
        wrong = steepy(command, "wf.yaml", "-s", "services.yaml", "--var", "woh=x")
        assert wrong.exit_code == 2
        assert wrong.stderr.splitlines()[0] == (
            "--var woh: the workflow has no variable `woh' that can be set; did you mean "
            "`who'?")
    assert not (here / ".steepy").exists()


def _ran_once(here: Path, chain_id: str, status: CS) -> str:
    """The database of a submission whose one chain ran once and ended `status`, printing
    nothing (no log file); its URL."""
    db = f"sqlite:///{here / 'steepy.db'}"
    registry = open_registry(db)
    sid = _submit(registry, WORKFLOW)
    store_chains(registry, sid, [ProcessChain(id=chain_id)])
    _, run = registry.queue.claim_chain("agent", only=sid)
    registry.queue.finish_run(chain_id, run, str(status), status, submission_id=sid)
    registry.close()
    return db


def test_logs_of_a_run_that_printed_nothing_is_no_bad_input(here: Path) -> None:
    db = _ran_once(here, "quiet", CS.SUCCESS)
    result = steepy("logs", "quiet", "--db", db)
    assert result.exit_code == 0 and result.stdout == ""
    assert result.stderr.startswith("No log of run 1 of `quiet' at ")
    assert result.stderr.endswith(": it printed nothing, its log could not be written, or it "
                                  "ran on another machine without a shared log store. The last "
                                  "lines of its attempts are kept with them (`steepy show`).\n")
    wrong = steepy("logs", "quiet", "--db", db, "--run", "7")  # no such run: bad input
    assert wrong.exit_code == 2
    assert wrong.stderr == "No log of run 7 of `quiet' (it has no run 7; its latest is run 1).\n"


def test_logs_of_a_run_whose_log_is_empty_say_so(here: Path) -> None:
    """A log file left empty (its lines could not be written: a full disk, found by a review)
    printed nothing and said nothing."""
    db = _ran_once(here, "emptied", CS.ERROR)
    (here / "logs" / "processchains").mkdir(parents=True, exist_ok=True)
    (here / "logs" / "processchains" / "emptied.log").write_bytes(b"")
    result = steepy("logs", "emptied", "--db", db)
    assert result.exit_code == 0 and result.stdout == ""
    assert result.stderr.startswith("The log of run 1 of `emptied' is empty: it printed nothing "
                                    "or its lines could not be written (a full disk).")


@pytest.mark.process
def test_ctrl_c_stops_the_waiting_not_the_submission(here: Path) -> None:
    """Ctrl-C of `steepy wait` (and `submit --wait`) exits 130, which a script tells from a
    failure (1), says that the submission goes on, and leaves it as it was."""
    import os
    import signal
    import subprocess
    import sys

    db = f"sqlite:///{here / 'steepy.db'}"
    registry = open_registry(db)
    waited = _submit(registry, WORKFLOW)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STEEPY_", "STEEP_"))}
    # (`submit --wait' waits through the same `wait_for')
    process = subprocess.Popen([sys.executable, "-m", "steepy", "wait", waited, "--db", db],
                               cwd=here, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        said = process.stderr.readline()  # it waits: nothing takes the submission
        assert HINT in said, said
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130, err
    assert f"stopped waiting: submission {waited} goes on (ACCEPTED;" in err, err
    assert "Traceback" not in err
    assert registry.views.get_submission(waited).status == "ACCEPTED"
    registry.close()


def test_wait_says_once_that_no_engine_drives_a_running_submission(here, monkeypatch) -> None:
    """Review (session 49): after `kill -9' of the `steepy run' that drove it, `show' and
    `list' say that no engine owns the submission, but `wait' said nothing, forever."""
    db = f"sqlite:///{here / 'steepy.db'}"
    registry = open_registry(db)
    left = _submit(registry, WORKFLOW)
    registry.leases.fetch_next_submission("dead-engine", 0.05, only=left)  # lease: 50 ms
    registry.close()
    time.sleep(0.1)  # the dead engine's lease runs out
    _virtual_time(monkeypatch, 60.0)  # a minute of looks: one line
    result = steepy("wait", left, "--db", db)
    assert result.exit_code == waiting.EXIT_INTERRUPTED, result.output
    lines = result.stderr.splitlines()
    assert re.fullmatch(rf"submission {left}: no engine has owned it since \d\d:\d\d; start "
                        r"`steepy worker'", lines[0]), result.stderr
    assert len(lines) == 2 and lines[1].startswith("stopped waiting: ")


def _virtual_time(monkeypatch, until_s: float) -> list[float]:
    """The watch's clock, virtual: each look's pause passes at once; Ctrl-C at `until_s`."""
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds
        if now[0] >= until_s:
            raise KeyboardInterrupt

    monkeypatch.setattr(waiting, "SLEEP", sleep)
    monkeypatch.setattr(waiting, "MONOTONIC", lambda: now[0])
    return now


def test_wait_prints_each_end_as_it_comes_and_ctrl_c_names_only_those_going_on(
        here, monkeypatch) -> None:
    """Review (session 49): ids were waited for in the order given, so one that had failed
    already was printed only after the others ended, and Ctrl-C said of it that it "goes on"
    (with `steepy cancel' to cancel it)."""
    db = f"sqlite:///{here / 'steepy.db'}"
    registry = open_registry(db)
    going, failed = _submit(registry, WORKFLOW), _submit(registry, WORKFLOW)
    registry.requests.cancel_submission(failed)  # ended before the wait began
    registry.close()
    _virtual_time(monkeypatch, 3.0)  # (before `UNTAKEN_S`: no word on workers)
    result = steepy("wait", going, failed, "--db", db)
    assert result.exit_code == waiting.EXIT_INTERRUPTED, result.output
    assert result.stdout == f"submission {failed}: CANCELLED\n"  # at once, not after `going'
    assert result.stderr.splitlines()[-1] == (
        f"stopped waiting: submission {going} goes on (ACCEPTED; `steepy cancel {going}' "
        "cancels it)")
    assert failed not in result.stderr


def test_wait_for_a_chain_names_its_submission(here) -> None:
    db = f"sqlite:///{here / 'steepy.db'}"
    registry = open_registry(db)
    sid = _submit(registry, WORKFLOW)
    store_chains(registry, sid, [ProcessChain(id="the-chain")])
    registry.close()
    result = steepy("wait", "the-chain", "--db", db)
    assert result.exit_code == 2
    assert result.stderr == (f"`the-chain' is a process chain, not a submission; its submission "
                             f"is {sid}.\n")


def test_wait_and_submit_json_print_each_document_as_a_line(here) -> None:
    """Review (session 49): a script had `steepy run --json' but no `--json' to wait with."""
    db = f"sqlite:///{here / 'steepy.db'}"
    registry = open_registry(db)
    first, second = _submit(registry, WORKFLOW), _submit(registry, WORKFLOW)
    for sid in (first, second):
        registry.requests.cancel_submission(sid)
    registry.close()
    result = steepy("wait", first, second, "--db", db, "--json")
    assert result.exit_code == 3, result.output
    documents = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(d["id"], d["status"], d["processChains"]) for d in documents] == [
        (first, "CANCELLED", []), (second, "CANCELLED", [])]
    stored = steepy("submit", "wf.yaml", "-s", "services.yaml", "--db", db, "--json")
    assert stored.exit_code == 0, stored.output
    assert json.loads(stored.stdout)["status"] == "ACCEPTED"


def _at(monkeypatch, actions: dict[float, Callable[[], None]], until_s: float) -> None:
    """The watch's virtual clock, with `actions` done when it first reaches their times."""
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds
        for when in sorted(actions):
            if now[0] >= when:
                actions.pop(when)()
        if now[0] >= until_s:
            raise KeyboardInterrupt

    monkeypatch.setattr(waiting, "SLEEP", sleep)
    monkeypatch.setattr(waiting, "MONOTONIC", lambda: now[0])


def test_a_worker_that_dies_later_and_an_engine_that_dies_later_are_said(here,
                                                                           monkeypatch) -> None:
    """Review of this session's change: the agents were looked at once, 5 s in, so a worker
    that died later was never said; and a submission said to have no worker, then taken by
    an engine that died, was never said to have none (one set held both)."""
    db = f"sqlite:///{here / 'steepy.db'}"
    registry = open_registry(db)
    later, taken = _submit(registry, WORKFLOW), _submit(registry, WORKFLOW)
    registry.leases.heartbeat("worker", [{"id": "agent-1"}], 600)

    def worker_dies() -> None:
        registry.leases.forget_agents("worker")

    def an_engine_takes_and_dies() -> None:
        registry.leases.fetch_next_submission("dead-engine", 0.05, only=taken)
        time.sleep(0.1)  # (its lease runs out, in the database's time)

    _at(monkeypatch, {7.0: worker_dies, 12.0: an_engine_takes_and_dies}, 30.0)
    result = steepy("wait", later, taken, "--db", db)
    registry.close()
    assert result.exit_code == waiting.EXIT_INTERRUPTED, result.output
    lines = result.stderr.splitlines()
    assert lines[:2] == [f"submission {later}: {HINT}", f"submission {taken}: {HINT}"]
    assert re.fullmatch(rf"submission {taken}: no engine has owned it since \d\d:\d\d; start "
                        r"`steepy worker'", lines[2]), result.stderr
    assert len(lines) == 5 and all(x.startswith("stopped waiting: ") for x in lines[3:])


class _Counting:
    """A backend that counts its reads of submissions; one answer of `document` fails as a
    server gone away would (the end of a submission read, not yet printed)."""

    def __init__(self, backend, fail_document: bool = False):
        self.backend, self.reads, self.fail_document = backend, 0, fail_document

    def submission(self, submission_id: str):
        self.reads += 1
        return self.backend.submission(submission_id)

    def document(self, submission_id: str):
        if self.fail_document:
            from steepy.http.client import Unreachable

            self.fail_document = False
            raise Unreachable("Cannot reach the steepy server at http://test: gone")
        return self.backend.document(submission_id)

    def __getattr__(self, name: str):
        return getattr(self.backend, name)


def _local(db: str):
    from steepy.api.local import LocalBackend
    from steepy.cli.setup import ReadingSetup

    return LocalBackend(db, ReadingSetup())


def test_an_end_read_when_the_server_goes_is_said_once_it_answers(here, monkeypatch,
                                                                   capsys) -> None:
    """Review of this session's change: a submission read as ended was taken off the list
    before its end was printed, so a server gone in between lost that line (with --json,
    a script reading a line per id missed one)."""
    import steepy.http.client  # noqa: F401  (loaded, as with --server: its errors are caught)

    db = f"sqlite:///{here / 'steepy.db'}"
    registry = open_registry(db)
    ended = _submit(registry, WORKFLOW)
    registry.requests.cancel_submission(ended)
    registry.close()
    _at(monkeypatch, {}, 60.0)
    backend = _Counting(_local(db), fail_document=True)
    assert waiting.wait_for(backend, [ended], as_json=True) == 3
    out = capsys.readouterr()
    assert [json.loads(line)["id"] for line in out.out.splitlines()] == [ended]
    assert out.err.splitlines()[1:] == ["the server answers again"]


def test_many_submissions_are_read_at_most_forty_times_a_second(here, monkeypatch) -> None:
    """Review of this session's change: each look reads each submission, every 0.25 s at
    most: 300 ids were 1,200 reads a second (on a server: as many requests)."""
    db = f"sqlite:///{here / 'steepy.db'}"
    registry = open_registry(db)
    many = [_submit(registry, WORKFLOW) for _ in range(200)]
    registry.leases.heartbeat("worker", [{"id": "agent-1"}], 600)  # (no word on workers)
    registry.close()
    _at(monkeypatch, {}, 60.0)
    backend = _Counting(_local(db))
    assert waiting.wait_for(backend, many) == waiting.EXIT_INTERRUPTED
    assert backend.reads <= 40 * 60 + 2 * 200  # (the ids checked first, the first round)
