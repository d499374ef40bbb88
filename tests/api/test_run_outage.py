"""steepy.run Ctrl-C'd while its SQLite database is lost (its file moved away and back): the
cancel is stored once the database is back, the wait said in one line, and only the
KeyboardInterrupt reaches the caller (not the driver's error, as it did)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

import steepy
from tests.api.test_run import _ctrl_c_as_at_a_terminal

pytestmark = pytest.mark.process

GONE = "its file is gone (deleted or moved away)"

SCRIPT = """
import os, steepy
started = os.path.abspath("started")
try:
    steepy.run("greet.yaml", services="services.yaml", db="run.db",
               vars={"script": f"touch {started}; sleep 30"})
except KeyboardInterrupt:
    with steepy.connect("run.db") as client:
        print("interrupted", client.submissions()[0].status)
"""


def test_ctrl_c_in_an_outage_cancels_once_the_database_is_back(scratch) -> None:
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT], cwd=scratch, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=_ctrl_c_as_at_a_terminal)
    try:
        end = time.monotonic() + 30
        while not (scratch / "started").exists() and time.monotonic() < end:
            time.sleep(0.05)
        assert (scratch / "started").exists()  # the tool runs (`sleep 30')
        (scratch / "run.db").rename(scratch / "away.db")
        try:
            time.sleep(1)
            proc.send_signal(signal.SIGINT)
            time.sleep(3)  # tried each second meanwhile
        finally:
            (scratch / "away.db").rename(scratch / "run.db")
        out, err = proc.communicate(timeout=20)  # not the 30 s the tool would sleep
    finally:
        proc.kill()
    assert out == "interrupted CANCELLED\n", err
    said = [line for line in err.splitlines() if line.startswith("cancelling submission")]
    assert len(said) == 1 and GONE in said[0], err  # said once, though tried each second
    assert "Traceback" not in err and "OperationalError" not in err, err
    with steepy.connect("run.db") as client:
        [submission] = client.submissions()
        assert [e.data["run"] for e in submission.events() if e.kind == "chain.started"] == [1]
