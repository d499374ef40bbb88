"""The commands that read on (`wait', `logs -f') open the database as the engines do, and
notice its file deleted while they wait (the one-shot readers read it once, through Python's
sqlite3: steepy/registry/quick.py, which watches no file)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.process

WORKFLOW = "api: 4.7.0\nname: waited\nactions: []\n"


def _steepy(*args: str) -> list[str]:
    return [sys.executable, "-m", "steepy.cli", *args]


def test_wait_says_the_database_file_is_gone(tmp_path) -> None:
    (tmp_path / "w.yaml").write_text(WORKFLOW)
    submitted = subprocess.run(_steepy("submit", "w.yaml"), cwd=tmp_path,
                               capture_output=True, text=True, timeout=60)
    assert submitted.returncode == 0, submitted.stderr  # ACCEPTED: no worker runs it
    waiting = subprocess.Popen(_steepy("wait", "last"), cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # it has read the submission and waits (no worker runs it), and says so
        assert "no steepy worker or server is running" in waiting.stderr.readline()
        assert waiting.poll() is None
        for path in (tmp_path / ".steepy").glob("steepy.db*"):
            path.unlink()
        out, err = waiting.communicate(timeout=30)
    finally:
        if waiting.poll() is None:
            waiting.kill()
            waiting.wait()
    assert waiting.returncode == 4, (out, err)
    assert "its file is gone" in err and "Traceback" not in err, err
