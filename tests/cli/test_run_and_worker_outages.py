"""`steepy run` and `steepy worker` in processes of their own while their SQLite database is
lost for two seconds (its file moved away and back): `run` still prints its timeline and
outcome, `run` Ctrl-C'd in the outage still cancels once the database is back, and a worker
with --exit-when-idle still exits once nothing is left to do."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.test_run_resumes_and_show import NAP
from tests.conftest import ROOT

pytestmark = [pytest.mark.process]

GONE = "its file is gone (deleted or moved away)"


def _env(tmp_path: Path) -> dict:
    return dict(os.environ, STEEPY_TMPPATH=str(tmp_path / "tmp"),
                STEEPY_OUTPATH=str(tmp_path / "out"),
                STEEPY_LOGS_PROCESSCHAINS_PATH=str(tmp_path / "logs"),
                STEEPY_DB_URL=f"sqlite:///{tmp_path / 'steepy.db'}",
                STEEPY_AGENT_KILLGRACEPERIOD="1s")


def _start(tmp_path: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "steepy.cli", *args], cwd=ROOT,
                            env=_env(tmp_path), text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def _started_run(tmp_path: Path, seconds: float) -> tuple[subprocess.Popen, str, list[str]]:
    """A piped `steepy run` of one chain that sleeps `seconds`, once that chain has started:
    the process, its submission's id and the lines it has printed so far."""
    (tmp_path / "nap.yaml").write_text(NAP % seconds)
    process = _start(tmp_path, "run", str(tmp_path / "nap.yaml"))
    lines = [process.stdout.readline()]  # `submission ID'
    while "chain.started" not in lines[-1]:
        assert lines[-1], "".join(lines) + process.stderr.read()
        lines.append(process.stdout.readline())
    return process, lines[0].split()[-1], lines


def _ended(process: subprocess.Popen, timeout_s: float = 20) -> tuple[str, str]:
    """What the process printed once it ended (killed if it had not by `timeout_s`)."""
    try:
        return process.communicate(timeout=timeout_s)
    finally:
        process.kill()


def _lose_database(tmp_path: Path, seconds: float, during=lambda: None) -> None:
    db, away = tmp_path / "steepy.db", tmp_path / "steepy.db.away"
    db.rename(away)
    try:
        during()
        time.sleep(seconds)
    finally:
        away.rename(db)


def test_run_prints_its_timeline_and_outcome_through_an_outage(tmp_path) -> None:
    process, submission_id, before = _started_run(tmp_path, 5)
    _lose_database(tmp_path, 2)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, out + err
    assert f"timeline of submission {submission_id}: database" in err and GONE in err
    assert "Traceback" not in err and "cannot use the database" not in err
    kinds = [line.split()[1] for line in before + out.splitlines()[:-1] if line[:1].isdigit()]
    assert kinds == ["submission.status", "submission.status", "chain.registered",
                     "chain.started", "chain.finished", "submission.status"]  # none twice
    assert out.splitlines()[-1] == f"submission {submission_id}: SUCCESS"


def test_run_interrupted_in_an_outage_cancels_once_the_database_is_back(tmp_path) -> None:
    process, submission_id, _ = _started_run(tmp_path, 30)
    _lose_database(tmp_path, 3, during=lambda: (time.sleep(1), process.send_signal(signal.SIGINT)))
    out, err = _ended(process, 20)  # not the 30 s the chain would sleep
    assert process.returncode == 3, out + err  # CANCELLED
    said = [line for line in err.splitlines() if line.startswith("cancelling submission")]
    assert len(said) == 1 and GONE in said[0], err  # said once, though tried each second
    assert "Traceback" not in err and "Exception in callback" not in err
    assert out.splitlines()[-1] == f"submission {submission_id}: CANCELLED"



def test_a_second_ctrl_c_stops_run_while_the_database_is_gone(tmp_path) -> None:
    """The first Ctrl-C's cancel cannot be stored while the database is gone; a second one
    stops the engine as a worker's SIGTERM does (a review had to kill -9 `steepy run'): the
    submission stays RUNNING for the next engine, which runs it to its end."""
    process, submission_id, _ = _started_run(tmp_path, 30)
    db, away = tmp_path / "steepy.db", tmp_path / "steepy.db.away"
    db.rename(away)
    try:
        time.sleep(1)
        process.send_signal(signal.SIGINT)
        time.sleep(2)  # the cancel is tried, and fails, each second
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=20)  # not the 30 s the chain would sleep
    finally:
        process.kill()
        away.rename(db)
    assert process.returncode == 4, out + err
    assert "stopping: the cancel could not be stored" in err
    assert err.splitlines()[-1] == f"steepy: stopped before submission {submission_id} ended"
    assert "Traceback" not in err
    from steepy.registry import open_registry

    registry = open_registry(f"sqlite:///{db}")
    try:
        assert registry.views.get_submission(submission_id).status == "RUNNING"
    finally:
        registry.close()


def test_two_ctrl_c_at_once_with_the_database_there_still_cancel(tmp_path) -> None:
    """Two Ctrl-C while the cancel waits for the write lock another process holds a moment (or
    a millisecond apart, from a wrapper that passes Ctrl-C on while the terminal sends it to
    the group too): the cancel is under way, not refused, so the run still ends CANCELLED (a
    review saw exit 4 and the submission left RUNNING)."""
    process, submission_id, _ = _started_run(tmp_path, 30)
    holder = sqlite3.connect(tmp_path / "steepy.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # the cancel waits for the write lock meanwhile
    try:
        process.send_signal(signal.SIGINT)
        time.sleep(0.3)
        process.send_signal(signal.SIGINT)
        time.sleep(0.5)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    out, err = _ended(process, 20)
    assert process.returncode == 3, out + err
    assert "stopping" not in err
    assert out.splitlines()[-1] == f"submission {submission_id}: CANCELLED"


def test_a_worker_exits_when_idle_after_an_outage(tmp_path) -> None:
    from steepy.documents.loading import parse_workflow
    from steepy.model import Submission
    from steepy.registry import open_registry

    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    workflow, _ = parse_workflow("api: 4.7.0\nactions: []\n")
    registry.requests.add_submission(Submission(id="s1", workflow=workflow, name="s1", source=""))
    registry.leases.fetch_next_submission("another-live-engine", 3600)  # driven elsewhere
    registry.close()
    worker = _start(tmp_path, "worker", "--agents", "1", "--exit-when-idle")
    assert worker.stderr.readline().startswith("worker ")
    time.sleep(1)
    _lose_database(tmp_path, 2)  # its idle check runs every 0.5 s: it fails in there
    time.sleep(2)
    with sqlite3.connect(tmp_path / "steepy.db") as db:  # the other engine ends s1
        db.execute("update submissions set status='SUCCESS' where id='s1'")
    db.close()
    try:
        _, err = worker.communicate(timeout=15)
    finally:
        worker.kill()
    assert worker.returncode == 0, err
    assert "idle check of worker" in err and GONE in err
    assert "Task exception was never retrieved" not in err


async def test_the_live_view_draws_on_after_an_outage(tmp_path, caplog) -> None:
    """The terminal's view (in this process) is not ended by the outage, says it in one line
    a try, and draws the submission once the database is back."""
    import asyncio
    import io

    from rich.console import Console

    from steepy.cli.live import live_view
    from steepy.documents.loading import parse_workflow
    from steepy.model import Submission
    from steepy.registry import open_registry

    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    workflow, _ = parse_workflow("api: 4.7.0\nactions: []\n")
    registry.requests.add_submission(Submission(id="s1", workflow=workflow, name="s1", source=""))
    screen, stop = io.StringIO(), asyncio.Event()
    view = asyncio.create_task(live_view(registry, "s1", Console(file=screen, width=100), stop,
                                         interval_s=0.05))
    try:
        await asyncio.sleep(0.3)
        (tmp_path / "steepy.db").rename(tmp_path / "away.db")
        await asyncio.sleep(1.5)  # a try at once, the next 1 s later
        assert not view.done()
        screen.truncate(0)
        (tmp_path / "away.db").rename(tmp_path / "steepy.db")
        stop.set()
        await asyncio.wait_for(view, 5)
    finally:
        view.cancel()
        registry.close()
    said = [r.getMessage() for r in caplog.records if r.name == "steepy.cli.following"]
    assert len(said) == 2 and all(GONE in line for line in said), said
    assert said[0].startswith("view of submission s1: database ")
    assert said[0].endswith("looking again in 1 s") and said[1].endswith("in 2 s")
    assert "submission: ACCEPTED" in screen.getvalue()
