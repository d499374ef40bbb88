"""Servers for the HTTP tests: `steepy serve` in a subprocess on a free loopback port (the
real thing, shared by the tests of a session), and the app in-process for quick checks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import ROOT

FINISHED = ("SUCCESS", "ERROR", "CANCELLED", "PARTIAL_SUCCESS")


class Server:
    """A `steepy serve` process and an HTTP client for it."""

    def __init__(self, directory: Path, *args: str, token: str | None = None,
                 env: dict[str, str] | None = None):
        self.directory = directory
        self.env = dict(os.environ, STEEPY_TMPPATH=str(directory / "tmp"),
                        STEEPY_OUTPATH=str(directory / "out"),
                        STEEPY_LOGS_PROCESSCHAINS_PATH=str(directory / "logs"),
                        STEEPY_DB_URL=f"sqlite:///{directory / 'steepy.db'}",
                        STEEPY_AGENT_KILLGRACEPERIOD="1s",
                        STEEPY_SCHEDULER_LOOKUPINTERVAL="200ms",
                        STEEPY_CONTROLLER_HEARTBEATINTERVAL="200ms")
        self.env.pop("STEEPY_SERVER", None)
        self.env.pop("STEEPY_HTTP_TOKEN", None)
        if token:
            self.env["STEEPY_HTTP_TOKEN"] = token
        self.env.update(env or {})
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "steepy.cli", "serve", "--port", "0", *args], cwd=ROOT,
            env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stderr.readline()  # "serving on http://127.0.0.1:PORT (...)"
        if not line.startswith("serving on "):
            self.proc.kill()
            raise RuntimeError(f"steepy serve did not start: {line}{self.proc.stderr.read()}")
        self.url = line.split()[2]
        self.output: list[str] = []  # the rest of its stderr, read so the pipe never fills
        threading.Thread(target=lambda: self.output.extend(self.proc.stderr), daemon=True).start()
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(base_url=self.url, headers=headers, timeout=30)

    def wait(self, submission_id: str, statuses=FINISHED, timeout_s: float = 30) -> dict:
        """Poll the submission until its status is one of `statuses`."""
        end = time.monotonic() + timeout_s
        while True:
            found = self.http.get(f"/workflows/{submission_id}").json()
            if found["status"] in statuses or time.monotonic() > end:
                return found
            time.sleep(0.05)

    def submit(self, text: str | bytes, **headers: str) -> str:
        response = self.http.post("/workflows", content=text, headers=headers)
        assert response.status_code == 202, response.text
        return response.json()["id"]

    def stop(self) -> int:
        self.http.close()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self.proc.stdout.close()
        return code


@pytest.fixture(scope="session")
def server(tmp_path_factory) -> Server:
    running = Server(tmp_path_factory.mktemp("server"), "--agents", "2")
    yield running
    assert running.stop() == 0  # SIGTERM stops server and engine cleanly


@pytest.fixture
def workflow_file(tmp_path):
    def write(text: str, name: str = "w.yaml") -> str:
        path = tmp_path / name
        path.write_text(text)
        return str(path)

    return write
