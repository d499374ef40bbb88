"""The engine's commands as a user (or a script) drives them, in separate processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from steepy.registry import open_registry
from tests.conftest import ROOT
from tests.engine.workflows import FAILS_ONCE, SLEEPY

pytestmark = [pytest.mark.process]




@pytest.fixture
def steepy(tmp_path):
    env = dict(os.environ, STEEPY_TMPPATH=str(tmp_path / "tmp"), STEEPY_OUTPATH=str(tmp_path / "out"),
               STEEPY_LOGS_PROCESSCHAINS_PATH=str(tmp_path / "logs"),
               STEEPY_DB_URL=f"sqlite:///{tmp_path / 'steepy.db'}",
               STEEPY_AGENT_KILLGRACEPERIOD="1s", STEEPY_SCHEDULER_LOOKUPINTERVAL="200ms",
               STEEPY_CONTROLLER_HEARTBEATINTERVAL="200ms")

    def run(*args: str, check: int | None = 0, **kwargs) -> subprocess.CompletedProcess:
        result = subprocess.run([sys.executable, "-m", "steepy.cli", *args], cwd=ROOT, env=env,
                                capture_output=True, text=True, timeout=60, **kwargs)
        if check is not None:
            assert result.returncode == check, result.stdout + result.stderr
        return result

    run.env = env
    return run


def _write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "w.yaml"
    path.write_text(text)
    return str(path)


def test_submit_worker_show_retry_events_logs(steepy, tmp_path) -> None:
    path = _write(tmp_path, FAILS_ONCE % (tmp_path / "state"))
    sid = steepy("submit", path).stdout.split()[-1]
    shown = json.loads(steepy("show", sid, "--json").stdout)
    assert shown["status"] == "ACCEPTED"
    stored = open_registry(steepy.env["STEEPY_DB_URL"]).views.get_submission(sid)
    assert stored.source == Path(path).read_text()  # the text as submitted
    steepy("worker", "--exit-when-idle", "--agents", "1")
    shown = json.loads(steepy("show", sid, "--json").stdout)
    assert shown["status"] == "ERROR" and shown["errorMessage"] == "All process chains failed"
    chain_id = shown["processChains"][0]["id"]
    chain = json.loads(steepy("show", chain_id, "--json").stdout)
    assert chain["status"] == "ERROR" and chain["runs"][0]["attempts"][0]["exitCode"] == 1
    assert "failing on purpose" in steepy("logs", chain_id).stdout

    assert "RUNNING again" in steepy("retry", sid).stdout
    steepy("worker", "--exit-when-idle", "--agents", "1")
    shown = json.loads(steepy("show", sid, "--json").stdout)
    assert shown["status"] == "SUCCESS" and list(shown["results"]) == ["out"]
    assert "attempt 2: success" in steepy("logs", chain_id, "--run", "2").stdout
    refused = steepy("retry", sid, check=2)
    assert "only ERROR, PARTIAL_SUCCESS and CANCELLED" in refused.stderr
    timeline = steepy("events", sid).stdout
    assert "submission.retried" in timeline and timeline.count("chain.started") == 2
    listed = steepy("list").stdout.splitlines()
    assert listed[1].startswith(f"{sid}\tSUCCESS\tfails once, then works\t1/1")


def test_run_json_and_exit_codes(steepy, tmp_path) -> None:
    result = steepy("run", _write(tmp_path, FAILS_ONCE % (tmp_path / "s")), "--json", check=1)
    document = json.loads(result.stdout)
    assert document["status"] == "ERROR" and document["processChains"][0]["runs"][0]["status"] == "ERROR"
    bad = steepy("run", _write(tmp_path, SLEEPY.replace("sleep,", "nosuch,")), check=2)
    assert "Service `nosuch' is not defined" in bad.stderr
    assert "listed" not in steepy("list").stdout and len(steepy("list").stdout.splitlines()) == 2


MANY = """\
api: 4.7.0
vars: [{id: items, value: [%s]}]
actions:
  - type: for
    input: items
    enumerator: i
    actions:
      - {id: t, type: execute, service: sleep, inputs: [{id: seconds, var: i}]}
"""


def test_run_ends_without_teardown_yet_writes_and_stores_everything(steepy, tmp_path) -> None:
    """`steepy run` ends its process without the interpreter's teardown (a third of a second
    after 1,000 chains): its whole document still reaches the pipe, its exit code is the
    submission's, and the database file alone holds the run, its WAL copied in and cut."""
    import sqlite3

    n = 150
    text = MANY % ", ".join(["0"] * n)
    result = steepy("run", _write(tmp_path, text), "--json", "--agents", "4")
    document = json.loads(result.stdout)  # more than a pipe's buffer: flushed to the end
    assert len(result.stdout) > 2 * 65536 and document["status"] == "SUCCESS"  # > a pipe
    assert len(document["processChains"]) == n
    database = tmp_path / "steepy.db"
    wal = database.with_name("steepy.db-wal")
    assert not wal.exists() or wal.stat().st_size == 0  # gone with the last connection, or cut
    copy = tmp_path / "copy.db"
    copy.write_bytes(database.read_bytes())
    with sqlite3.connect(copy) as db:
        assert db.execute("SELECT status FROM submissions").fetchall() == [("SUCCESS",)]
        assert db.execute("SELECT count(*) FROM runs WHERE status = 'SUCCESS'").fetchone()[0] == n

    # a reader that goes away (`| head -c 10`): exit 1 without a traceback, and still closed
    process = subprocess.Popen([sys.executable, "-m", "steepy.cli", "run", _write(tmp_path, text),
                                "--json"], cwd=ROOT, env=steepy.env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    assert process.stdout.read(10) == b'{\n  "id": '
    process.stdout.close()
    assert process.wait(timeout=60) == 1
    assert process.stderr.read() == b""
    assert not wal.exists() or wal.stat().st_size == 0
    process.stderr.close()


def test_interrupted_run_is_cancelled_and_exits_3(steepy, tmp_path) -> None:
    process = subprocess.Popen([sys.executable, "-m", "steepy.cli", "run", _write(tmp_path, SLEEPY)],
                               cwd=ROOT, env=steepy.env, stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and "chain.started" not in process.stdout.readline():
        pass
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=30) == 3
    assert "CANCELLED" in process.stdout.read()


def test_cancel_from_another_process(steepy, tmp_path) -> None:
    sid = steepy("submit", _write(tmp_path, SLEEPY)).stdout.split()[-1]
    worker = subprocess.Popen([sys.executable, "-m", "steepy.cli", "worker", "--agents", "1"],
                              cwd=ROOT, env=steepy.env, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        with _views(steepy) as views:
            while not views.chain_counts(sid).get("RUNNING"):
                assert time.monotonic() < deadline
                time.sleep(0.05)
        assert json.loads(steepy("show", sid, "--json").stdout)["runningProcessChains"] > 0
        assert "cancel requested (was RUNNING" in steepy("cancel", sid).stdout
        _await_status(steepy, sid, "CANCELLED", deadline, "not cancelled")
        assert "already finished" in steepy("cancel", sid, check=2).stderr
    finally:
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=30) == 0


SLOW_SWEEPS = {"STEEPY_SCHEDULER_LOOKUPINTERVAL": "60s", "STEEPY_CONTROLLER_HEARTBEATINTERVAL": "60s",
               "STEEPY_CONTROLLER_LEASETIMEOUT": "120s"}


@contextmanager
def _workers_without_sweeps(steepy):
    """Start workers (`start(*args, **env)' returns the worker's id) whose sweeps and
    recovery rounds are a minute apart: within a test only the database watcher wakes them."""
    started: list[subprocess.Popen] = []

    def start(*args: str, **env: str) -> str:
        worker = subprocess.Popen([sys.executable, "-m", "steepy.cli", "worker", "--agents", "1",
                                   *args], cwd=ROOT, env=dict(steepy.env, **SLOW_SWEEPS, **env),
                                  stderr=subprocess.PIPE, text=True)
        started.append(worker)
        return worker.stderr.readline().split()[1]  # "worker ID with 1 agent(s)": it is up

    try:
        yield start
    finally:
        for worker in started:
            worker.send_signal(signal.SIGTERM)
        for worker in started:
            assert worker.wait(timeout=30) == 0


@contextmanager
def _views(steepy):
    """The database's views, read in this process: a `steepy show' process per look cost
    CPU that the workers under test then lacked."""
    registry = open_registry(steepy.env["STEEPY_DB_URL"])
    try:
        yield registry.views
    finally:
        registry.close()


def _await_status(steepy, sid: str, status: str, deadline: float, what: str) -> dict:
    """Wait until the submission has `status' (read in this process); then what `steepy
    show --json' says of it."""
    with _views(steepy) as views:
        while (now := views.submission_status(sid)) != status:
            assert time.monotonic() < deadline, f"{what} (still {now})"
            time.sleep(0.05)
    doc = json.loads(steepy("show", sid, "--json").stdout)
    assert doc["status"] == status, doc
    return doc


def test_worker_notices_a_new_submission_at_once(steepy, tmp_path, database_url) -> None:
    """Only the database watcher (SQLite's data_version, PostgreSQL's LISTEN/NOTIFY) can
    wake the worker in time."""
    steepy.env["STEEPY_DB_URL"] = database_url
    with _workers_without_sweeps(steepy) as start:
        start()
        time.sleep(0.5)
        sid = steepy("submit", _write(tmp_path, SLEEPY.replace("value: 30", "value: 0.1"))).stdout.split()[-1]
        _await_status(steepy, sid, "SUCCESS", time.monotonic() + 20,
                      "the worker did not notice the submission")


def test_chains_run_by_another_worker_are_fed_back_at_once(steepy, tmp_path, database_url) -> None:
    """Worker A controls the submission but cannot run its chains (they need a capability
    only worker B offers). A's controller learns of B's finished chains only through the
    database watcher."""
    import yaml

    services = []
    for name in ("coreutils.yaml", "demo.yaml"):
        for service in yaml.safe_load((ROOT / "services" / name).read_text()):
            service["requiredCapabilities"] = ["special"]
            services.append(service)
    (tmp_path / "services.yaml").write_text(yaml.safe_dump(services))
    steepy.env["STEEPY_DB_URL"] = database_url
    with _workers_without_sweeps(steepy) as start:
        controller = start("--services", str(tmp_path / "services.yaml"))
        sid = steepy("submit", str(ROOT / "workflows" / "fan-out.yaml"), "--services",
                     str(tmp_path / "services.yaml")).stdout.split()[-1]
        deadline = time.monotonic() + 20
        _await_status(steepy, sid, "RUNNING", deadline, "worker A did not take the submission")
        start("--services", str(tmp_path / "services.yaml"), STEEPY_AGENT_CAPABILITIES="[special]")
        doc = _await_status(steepy, sid, "SUCCESS", deadline, "not fed back in time")
    assert doc["totalProcessChains"] == 6  # split, 4 sorts, cat: three rounds
    agents = {r["agentId"] for c in doc["processChains"] for r in c["runs"]}
    assert len(agents) == 1 and controller not in agents


def test_worker_takes_up_a_retried_submission_at_once(steepy, tmp_path) -> None:
    """A retry from another process is taken up long before the next recovery round."""
    sid = steepy("submit", _write(tmp_path, FAILS_ONCE % (tmp_path / "state"))).stdout.split()[-1]
    steepy("worker", "--exit-when-idle", "--agents", "1")
    assert json.loads(steepy("show", sid, "--json").stdout)["status"] == "ERROR"
    with _workers_without_sweeps(steepy) as start:
        start()
        time.sleep(0.5)
        steepy("retry", sid)
        _await_status(steepy, sid, "SUCCESS", time.monotonic() + 20,
                      "the worker did not take up the retry")
