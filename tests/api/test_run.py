"""steepy.run: an engine in the calling process (tools and the executor are real processes),
from a script, a thread, and a running event loop as in a notebook."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import steepy
from tests.conftest import ROOT

pytestmark = pytest.mark.process

FAIL = 'echo "bad $1"; exit 3'


def test_run_returns_the_finished_submission_with_results_logs_and_events(scratch) -> None:
    submission = steepy.run("greet.yaml", services="services.yaml", vars={"who": "API"},
                            db="run.db")
    assert submission.status == "SUCCESS" and submission.finished
    [path] = submission.results["greeting"]
    assert Path(path).read_text() == "hello API\n"
    [chain] = submission.chains()
    assert chain.status == "SUCCESS" and chain.logs() == "hello API\n"
    [attempt] = chain.attempts
    assert (attempt.outcome, attempt.exit_code, attempt.number) == ("SUCCESS", 0, 1)
    events = list(submission.events())  # it has finished: the iterator ends
    assert [e.status for e in events if e.kind == "submission.status"] == [
        "ACCEPTED", "RUNNING", "SUCCESS"]
    assert {"chain.started", "chain.finished"} <= {e.kind for e in events}
    assert (scratch / "run.db").exists() and not (scratch / ".steepy" / "steepy.db").exists()
    with steepy.connect("run.db") as client:  # the same, read again
        assert client.submission(submission.id).results == submission.results


def test_a_failure_its_attempts_and_a_retry_by_a_worker(scratch) -> None:
    failed = steepy.run("greet.yaml", services="services.yaml", vars={"script": FAIL})
    assert failed.status == "ERROR" and failed.error_message == "All process chains failed"
    [chain] = failed.chains()
    assert chain.status == "ERROR" and chain.logs() == "bad world\n"
    assert "exited with code 3" in chain.error_message
    assert [a.exit_code for a in chain.attempts] == [3]
    assert failed.retry() == "ERROR" and failed.status == "RUNNING"
    worker = subprocess.run([sys.executable, "-m", "steepy.cli", "worker", "--exit-when-idle",
                             "-s", "services.yaml"], cwd=scratch, capture_output=True,
                            text=True, timeout=60)
    assert worker.returncode == 0, worker.stderr
    assert failed.wait(timeout=10) == "ERROR"  # the same tool fails again
    assert [r.number for r in failed.chains()[0].runs] == [1, 2]
    assert failed.chains()[0].logs(run=1) == "bad world\n"


def test_bad_input_stores_nothing(scratch) -> None:
    with pytest.raises(steepy.InputError) as unknown:
        steepy.run("greet.yaml", services="services.yaml", vars={"nobody": 1})
    assert str(unknown.value) == ("<vars>: nobody: the workflow has no variable `nobody' that "
                                  "can be set (it has: `script', `who')")
    assert not (scratch / ".steepy").exists()


def test_run_in_a_running_event_loop_and_in_a_thread(scratch) -> None:
    async def notebook_cell() -> str:  # a notebook runs its cells in an event loop
        return steepy.run("greet.yaml", services="services.yaml").status

    assert asyncio.run(notebook_cell()) == "SUCCESS"
    found: list = []
    thread = threading.Thread(target=lambda: found.append(
        steepy.run("greet.yaml", services="services.yaml", vars={"who": "thread"})))
    thread.start()
    thread.join(60)
    assert found[0].status == "SUCCESS"
    assert Path(found[0].results["greeting"][0]).read_text() == "hello thread\n"


SCRIPT = """
import steepy
try:
    steepy.run("greet.yaml", services="services.yaml", vars={"script": "echo go; sleep 30"})
except KeyboardInterrupt:
    with steepy.connect(".steepy/steepy.db") as client:
        print("interrupted", client.submissions()[0].status)
"""

# the same from a notebook's cell: inside `asyncio.run', whose SIGINT handler only cancels
# its main task (which waits in steepy.run until the run has ended)
IN_A_LOOP = """
import asyncio, steepy

async def cell():
    steepy.run("greet.yaml", services="services.yaml", vars={"script": "echo go; sleep 30"})

try:
    asyncio.run(cell())
except KeyboardInterrupt:
    with steepy.connect(".steepy/steepy.db") as client:
        print("interrupted", client.submissions()[0].status)
"""


def _ctrl_c_as_at_a_terminal() -> None:
    """A script started in the background by a shell without job control (`nohup make test
    &`) inherits SIGINT ignored, and Python then leaves it so: Ctrl-C would do nothing."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("script", [SCRIPT, IN_A_LOOP], ids=["script", "asyncio.run"])
def test_ctrl_c_cancels_the_submission_and_is_raised_again(scratch, script: str) -> None:
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=scratch, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=_ctrl_c_as_at_a_terminal)
    end = time.monotonic() + 30
    while not (scratch / ".steepy" / "steepy.db").exists() and time.monotonic() < end:
        time.sleep(0.05)
    with steepy.connect(".steepy/steepy.db") as client:
        while not client.submissions() and time.monotonic() < end:
            time.sleep(0.05)
        [submission] = client.submissions()
        started = (e for e in submission.events() if e.kind == "chain.started")
        assert next(started).data["run"] == 1  # the tool runs (`sleep 30')
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert out == "interrupted CANCELLED\n", err
    assert time.monotonic() - started < 10  # the tool was stopped, not waited for


def test_importing_steepy_imports_no_api_until_it_is_used() -> None:
    code = ("import sys, steepy, steepy.model\n"
            "print('steepy.api' in sys.modules, 'httpx' in sys.modules)\n"
            "steepy.connect\n"
            "print('steepy.api' in sys.modules, steepy.__version__ != '')\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    assert out == "False False\nTrue True\n"
    assert (ROOT / "steepy" / "py.typed").exists()
    assert set(steepy.__all__) >= {"connect", "run", "Submission", "Chain", "InputError"}


WATCHED = """
import os, signal, threading, time, steepy
seen = []

def look():  # once the tool runs
    while not os.path.exists("started"):
        time.sleep(0.01)
    seen.append(signal.getsignal(signal.SIGINT))

threading.Thread(target=look, daemon=True).start()
started = os.path.abspath("started")
steepy.run("greet.yaml", services="services.yaml", vars={"script": f"touch {started}; sleep 1"})
print(seen[0] is not signal.default_int_handler,
      signal.getsignal(signal.SIGINT) is signal.default_int_handler)
"""


def test_ctrl_c_is_counted_while_the_engine_runs_not_raised_between_two_statements(
        scratch) -> None:
    """A KeyboardInterrupt raised in the waiting loop outside its `try' would leave without
    cancelling, and the engine's threads would keep the process alive until the tool ended
    (seen once under load): while the engine runs, Ctrl-C only counts; Python's handler is
    back afterwards."""
    done = subprocess.run([sys.executable, "-c", WATCHED], cwd=scratch, capture_output=True,
                          text=True, timeout=60, preexec_fn=_ctrl_c_as_at_a_terminal)
    assert done.stdout == "True True\n", done.stderr


STRAY = """
import os, signal, threading, steepy

class Stray(Exception):
    pass

def handler(signum, frame):  # the caller's own SIGINT handler: steepy.run leaves it be
    raise Stray()

def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False

def open_files(name):
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            found.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            pass
    return [f for f in found if os.path.basename(f).startswith(name)]

signal.signal(signal.SIGINT, handler)
started = os.path.abspath("started")
try:
    steepy.run("greet.yaml", services="services.yaml", db="run.db",
               vars={"script": f"echo $$ > {started}.new; mv {started}.new {started}; sleep 30"})
except Stray:
    engines = [t for t in threading.enumerate() if t.name.startswith("steepy engine")]
    pid = int(open(started).read())
    print(len(engines), alive(pid), open_files("run.db"))
"""


def test_an_exception_while_waiting_stops_the_engine_and_closes_the_database(scratch) -> None:
    """Raised in the waiting loop (here by a SIGINT handler of the caller's), an exception
    would leave the engine's thread running tools with nobody waiting for them."""
    proc = subprocess.Popen([sys.executable, "-c", STRAY], cwd=scratch, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    end = time.monotonic() + 30
    while not (scratch / "started").exists() and time.monotonic() < end:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert out == "0 False []\n", err


def test_a_database_in_memory_is_refused(scratch) -> None:
    for url in ("sqlite://", "sqlite:///:memory:", ":memory:"):
        with pytest.raises(steepy.InputError, match=(
                r"^db: `sqlite://(/:memory:)?' is an SQLite database in memory, which each "
                "thread sees empty: steepy.run needs a file")):
            steepy.run("greet.yaml", services="services.yaml", db=url)
    (scratch / "steepy.yaml").write_text("db:\n  url: sqlite://\n")
    with pytest.raises(steepy.InputError, match="^db.url: `sqlite://' is an SQLite database"):
        steepy.run("greet.yaml", services="services.yaml")


def test_the_log_of_a_run_that_printed_nothing_is_empty(scratch) -> None:
    quiet = steepy.run("greet.yaml", services="services.yaml", vars={"script": ': > "$2"'})
    [chain] = quiet.chains()
    assert chain.status == "SUCCESS" and chain.logs() == "" and chain.logs(run=1) == ""
    with pytest.raises(steepy.NotFound, match=f"^Process chain `{chain.id}' has no run 2: it "
                                              r"has run 1 time\(s\)\.$"):
        chain.logs(run=2)


def _open_files(name: str) -> list[str]:
    import psutil

    return [f.path for f in psutil.Process().open_files()
            if os.path.basename(f.path).startswith(name)]


def test_a_submission_let_go_closes_its_database(scratch) -> None:
    """A notebook runs many workflows: each returned submission keeps its database open while
    it is referenced, no longer. The engine's pool held its connector (by the connector's own
    listeners) and a connection the connector held kept the pool, so every run left about ten
    files open until the process ended."""
    for who in ("a", "b", "c"):
        submission = steepy.run("greet.yaml", services="services.yaml", vars={"who": who},
                                db="loop.db")
        assert submission.status == "SUCCESS" and _open_files("loop.db")
        del submission
        gc.collect()
        assert _open_files("loop.db") == [], who


def test_a_finished_chain_is_not_cancelled_and_runs_are_numbered_from_1(scratch) -> None:
    """A chain's cancel is refused as a submission's is (it did nothing and said nothing),
    `logs(run=0)` is no run (it read as None: the latest), and wrong arguments are named."""
    submission = steepy.run("greet.yaml", services="services.yaml", db="run.db")
    [chain] = submission.chains()
    with pytest.raises(steepy.Refused) as refused:
        chain.cancel()
    assert refused.value.status == "SUCCESS" and chain.refresh().status == "SUCCESS"
    assert str(refused.value) == (f"Process chain `{chain.id}' has already finished "
                                  "(SUCCESS); nothing to cancel.")
    assert chain.logs(run=1) == "hello world\n"
    for run in (0, -1, True, "1"):
        with pytest.raises(steepy.NotFound, match="runs are numbered from 1"):
            chain.logs(run=run)
    with pytest.raises(steepy.InputError, match="^timeout: '5' is not a number of seconds"):
        submission.wait(timeout="5")
    with pytest.raises(steepy.InputError, match="^workflow: the workflow is empty"):
        steepy.run("", services="services.yaml", db="run.db")
