"""The live feed against real processes: `steepy serve` without agents, a `steepy worker`
in another process on the same database. GET /events delivers every committed event in
commit order, the worker's too, and a client that reconnects with Last-Event-ID to a
restarted server gets exactly what it missed."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from tests.conftest import ROOT
from tests.http.conftest import Server
import pytest

pytestmark = [pytest.mark.process]

WORKFLOW = (ROOT / "workflows" / "fan-out.yaml").read_text()


class Listener:
    """GET /events in a thread, collecting every event."""

    def __init__(self, url: str, last_event_id: int | None = None):
        self.events: list[dict] = []
        self.opened = threading.Event()
        self._response: httpx.Response | None = None
        headers = {} if last_event_id is None else {"Last-Event-ID": str(last_event_id)}
        self._client = httpx.Client(base_url=url, timeout=httpx.Timeout(30, read=None))
        self._thread = threading.Thread(target=self._listen, args=(headers,), daemon=True)
        self._thread.start()
        assert self.opened.wait(30), "the feed did not answer"

    def _listen(self, headers: dict) -> None:
        try:
            with self._client.stream("GET", "/events", headers=headers) as response:
                self._response = response
                assert response.headers["content-type"].startswith("text/event-stream")
                self.opened.set()
                for line in response.iter_lines():
                    if line.startswith("data: "):
                        self.events.append(json.loads(line[6:]))
        except (httpx.HTTPError, RuntimeError):
            pass  # the server went away, or we closed the client

    def wait_for(self, predicate, timeout_s: float = 60) -> None:
        end = time.monotonic() + timeout_s
        while not any(predicate(e) for e in list(self.events)):
            assert time.monotonic() < end, f"not in the feed: {self.events[-5:]}"
            time.sleep(0.05)

    def close(self) -> None:
        # closing the stream ends the reader's blocking read at once (closing the client
        # alone leaves it waiting for the next event)
        if self._response is not None:
            stream = self._response.extensions["network_stream"]
            stream.get_extra_info("socket").shutdown(socket.SHUT_RDWR)
        self._client.close()
        self._thread.join(10)
        assert not self._thread.is_alive(), "the feed's reader did not stop"


def _finished(sid: str):
    return lambda e: (e.get("submissionId") == sid and e["kind"] == "submission.status"
                      and e["status"] in ("SUCCESS", "ERROR", "CANCELLED", "PARTIAL_SUCCESS"))


def _worker(server: Server) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "steepy.cli", "worker", "--agents", "2",
                             "--services", "services"], cwd=ROOT, env=server.env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def test_feed_delivers_a_remote_workers_events_in_order_and_resumes(tmp_path: Path) -> None:
    server = Server(tmp_path, "--no-agents")
    worker = _worker(server)
    try:
        listener = Listener(server.url)
        listener.wait_for(lambda e: e["kind"] == "agent.arrived")  # the worker's agents
        first = server.submit(WORKFLOW)
        listener.wait_for(_finished(first))
        stored = server.http.get(f"/workflows/{first}/events").json()
        mine = [e for e in listener.events if e.get("submissionId") == first]
        assert [e["id"] for e in mine] == [e["id"] for e in stored]
        assert [e["kind"] for e in mine] == [e["kind"] for e in stored]
        ids = [e["id"] for e in listener.events]
        assert ids == sorted(ids) and len(set(ids)) == len(ids)
        assert sum(e["kind"] == "chain.finished" for e in mine) == 6  # split, 4 sorts, cat

        seen = mine[len(mine) // 2]["id"]  # the client saw half of it, then the server went
        listener.close()
        assert server.stop() == 0
        # meanwhile the worker runs a submission made with the command line
        (tmp_path / "w.yaml").write_text(WORKFLOW)
        made = subprocess.run([sys.executable, "-m", "steepy.cli", "submit",
                               str(tmp_path / "w.yaml"), "--services", "services"], cwd=ROOT,
                              env=server.env, capture_output=True, text=True, timeout=60)
        assert made.returncode == 0, made.stderr
        second = made.stdout.split()[-1].strip()
        restarted = Server(tmp_path, "--no-agents")
        server = restarted
        resumed = Listener(server.url, last_event_id=seen)
        resumed.wait_for(_finished(second))
        everything = (server.http.get(f"/workflows/{first}/events").json()
                      + server.http.get(f"/workflows/{second}/events").json())
        expected = sorted(e["id"] for e in everything if e["id"] > seen)
        got = [e["id"] for e in resumed.events if e.get("submissionId") in (first, second)]
        assert got == expected  # exactly what was missed, in order, nothing twice
        resumed.close()
    finally:
        _stop(worker)
        server.stop()


def test_feed_of_one_submission_and_from_now(tmp_path: Path) -> None:
    server = Server(tmp_path, "--agents", "2")
    try:
        before = server.submit(WORKFLOW)
        server.wait(before)
        everything = Listener(server.url)  # from now on: nothing of `before`
        sid = server.submit(WORKFLOW)
        only: list[dict] = []
        with server.http.stream("GET", "/events", params={"submissionId": sid, "after": 0},
                                timeout=httpx.Timeout(30, read=60)) as response:
            for line in response.iter_lines():
                if line.startswith("data: "):
                    only.append(json.loads(line[6:]))
                    if _finished(sid)(only[-1]):
                        break
        assert {e["submissionId"] for e in only} == {sid}
        stored = server.http.get(f"/workflows/{sid}/events").json()
        assert [e["id"] for e in only] == [e["id"] for e in stored]
        everything.wait_for(_finished(sid))
        assert before not in {e.get("submissionId") for e in everything.events}
        everything.close()
    finally:
        server.stop()
