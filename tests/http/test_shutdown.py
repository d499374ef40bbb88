"""SIGTERM stops the HTTP server and the engine together, even with a live stream open."""

from __future__ import annotations

import threading
import time

import httpx
import psutil

from tests.engine.workflows import SLEEPY
from tests.http.conftest import Server
import pytest

pytestmark = [pytest.mark.process]


def test_sigterm_stops_server_engine_and_streams(tmp_path) -> None:
    server = Server(tmp_path, "--agents", "1")
    try:
        sid = server.submit(SLEEPY)
        end = time.monotonic() + 20
        while not (sleepers := [p for p in psutil.Process(server.proc.pid).children(True)
                                if p.name() == "sleep"]):
            assert time.monotonic() < end, "the tool did not start"
            time.sleep(0.05)
        lines: list[str] = []

        def follow() -> None:
            with httpx.stream("GET", f"{server.url}/workflows/{sid}/stream", timeout=30) as r:
                lines.extend(r.iter_lines())

        reader = threading.Thread(target=follow)
        reader.start()
        end = time.monotonic() + 20  # the stream is open and has said what happened so far
        while not any("chain.started" in line for line in list(lines)):
            assert time.monotonic() < end, f"the stream said nothing: {lines}"
            time.sleep(0.05)
        began = time.monotonic()
    finally:
        code = server.stop()
    assert code == 0 and time.monotonic() - began < 10
    reader.join(5)
    assert not reader.is_alive() and any("chain.started" in line for line in lines)
    _gone, alive = psutil.wait_procs(sleepers, timeout=5)
    assert not alive  # the engine stopped its tool before exiting
