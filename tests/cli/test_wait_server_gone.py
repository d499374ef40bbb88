"""`steepy submit --server --wait` and `wait --server` when the server stops answering
(review, session 49): a restart is waited out and the watching goes on to the submission's
end; a server gone for good ends the watching with exit code 4 (a server that cannot be
reached, docs/reference/exit-codes.md), saying that the submission goes on there. It was
exit code 2 at once ("bad input, nothing stored": a script resubmitting on 2 made a second
submission of one that was stored and running)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from steepy.cli import main, waiting
from tests.conftest import ROOT
from tests.http.conftest import Server

NAP = """\
api: 4.7.0
name: nap
actions:
  - {id: nap, type: execute, service: sleep, inputs: [{id: seconds, value: 2}]}
"""


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STEEPY_", "STEEP_"))}
    return dict(env, PYTHONPATH=str(ROOT))


@pytest.mark.process
def test_a_server_restart_is_waited_out(tmp_path: Path) -> None:
    server = Server(tmp_path, "--agents", "1")
    port = server.url.rsplit(":", 1)[1]
    (tmp_path / "nap.yaml").write_text(NAP)
    waiter = subprocess.Popen([sys.executable, "-m", "steepy", "submit", "nap.yaml", "--wait",
                               "--server", server.url], cwd=tmp_path, env=_env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        submitted = waiter.stdout.readline()  # (then it looks at once: it is waiting)
        assert submitted.startswith("submitted "), waiter.stderr.read()
        submission_id = submitted.split()[1]
        server.wait(submission_id, statuses=("RUNNING",))
        assert server.stop() == 0  # its lease ends: the next engine takes the submission
        time.sleep(1.0)  # the waiter finds no server for a while
        server = Server(tmp_path, "--agents", "1", "--port", port)
        out, err = waiter.communicate(timeout=60)
    finally:
        waiter.kill()
        server.stop()
    assert waiter.returncode == 0, err
    assert out == f"submission {submission_id}: SUCCESS\n"  # (after `submitted ID')
    lines = err.splitlines()
    assert lines[0].startswith(f"Cannot reach the steepy server at {server.url}: ")
    assert lines[0].endswith("; still waiting for it (a restart): the submissions go on there")
    assert lines[1:] == ["the server answers again"]


@pytest.mark.process
def test_a_server_gone_for_good_ends_the_watching_with_exit_code_4(tmp_path: Path,
                                                                     monkeypatch) -> None:
    server = Server(tmp_path, "--agents", "0")  # (no agent: its chain never starts)
    submission_id = server.submit(NAP)
    server.wait(submission_id, statuses=("RUNNING",))
    now = [0.0]

    def sleep(seconds: float) -> None:  # virtual time; the server goes at the first pause
        if server.proc.poll() is None:
            assert server.stop() == 0
        now[0] += seconds

    monkeypatch.setattr(waiting, "SLEEP", sleep)
    monkeypatch.setattr(waiting, "MONOTONIC", lambda: now[0])
    try:
        result = CliRunner().invoke(main, ["wait", submission_id, "--server", server.url],
                                    catch_exceptions=False)
    finally:  # (a wait that never paused left the server running)
        if server.proc.poll() is None:
            server.stop()
    assert result.exit_code == 4, result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert lines[0].endswith("still waiting for it (a restart): the submissions go on there")
    assert lines[1:] == [f"stopped waiting: the server did not answer for "
                         f"{waiting.SERVER_GONE_S:g} s: submission {submission_id} goes on "
                         f"(RUNNING; `steepy cancel {submission_id}' cancels it)"]
    assert now[0] >= waiting.SERVER_GONE_S


@pytest.mark.process
def test_a_server_whose_database_is_gone_is_one_that_cannot_answer_now(tmp_path: Path) -> None:
    """Review of this session's change: a server whose database went away answers 503 (try
    again later), as a proxy in front of a restarting one answers 502 or 503: that was exit
    2 ("bad input") at once, also for a `wait' that would wait a restart out."""
    server = Server(tmp_path, "--agents", "0")
    try:
        for name in ("steepy.db", "steepy.db-wal", "steepy.db-shm"):
            (tmp_path / name).unlink(missing_ok=True)
        end = time.monotonic() + 30  # (the server notices its file gone at its next look)
        while server.http.get("/workflows").status_code != 503:
            assert time.monotonic() < end, "the server went on answering"
            time.sleep(0.1)
        listed = subprocess.run([sys.executable, "-m", "steepy", "list", "--server",
                                 server.url], cwd=tmp_path, env=_env(), capture_output=True,
                                text=True, timeout=60)
    finally:
        server.stop()
    assert listed.returncode == 4, listed.stderr
    assert listed.stderr.startswith(f"The server at {server.url} answered 503: ")
