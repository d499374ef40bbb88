"""A webhook receiver for the tests: a small threaded HTTP server on loopback that records
every request and answers as told (a status, or "hang": no answer until closed)."""

from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def key(self) -> str:
        return self.headers["Idempotency-Key"]

    @property
    def document(self) -> dict:
        return json.loads(self.body)


def free_port() -> int:
    """A loopback port nobody listens on (yet): a receiver that is down."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Receiver:
    def __init__(self, port: int = 0, answers: list[int | str] | None = None):
        self.requests: list[Received] = []
        self.answers = list(answers or [])  # then 200 for ever
        self._lock = threading.Lock()
        self._closing = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver._lock:
                    receiver.requests.append(Received(self.path, dict(self.headers), raw))
                    answer = receiver.answers.pop(0) if receiver.answers else 200
                if answer == "hang":
                    receiver._closing.wait(60)
                    return
                self.send_response(int(answer))
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_args) -> None:
                pass

        ThreadingHTTPServer.allow_reuse_address = True
        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def wait_for(self, count: int, timeout_s: float = 30) -> list[Received]:
        end = time.monotonic() + timeout_s
        while len(self.requests) < count:
            assert time.monotonic() < end, f"{len(self.requests)} of {count} requests arrived"
            time.sleep(0.02)
        return list(self.requests)

    def close(self) -> None:
        self._closing.set()
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> "Receiver":
        return self

    def __exit__(self, *_exc) -> None:
        self.close()
