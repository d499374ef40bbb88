"""The client over a server that is not steepy's (a proxy's HTML page, another server's JSON)
or a stream that ends at once: a tiny HTTP server of the test's, in a thread."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

import pytest

import steepy
from steepy.api.submission import Submission

Answer = tuple[int, str, bytes]  # status, content type, body
HTML = (200, "text/html; charset=utf-8", b"<html><body>Please log in</body></html>")
NOT_JSON = r"answered 200 with text/html, not JSON: is it a steepy server\?$"


class _Handler(BaseHTTPRequestHandler):
    def _answer(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.server.paths.append(self.path)  # type: ignore[attr-defined]
        status, kind, body = self.server.answer(self.path)  # type: ignore[attr-defined]
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = _answer

    def log_message(self, *args) -> None:
        pass


class Stranger:
    """A server answering what `answer(path)` says; `paths` it was asked for."""

    def __init__(self) -> None:
        self.http = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.http.answer = lambda path: HTML  # type: ignore[attr-defined]
        self.http.paths = self.paths = []  # type: ignore[attr-defined]
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)

    def answers(self, answer: Callable[[str], Answer]) -> None:
        self.http.answer = answer  # type: ignore[attr-defined]


@pytest.fixture
def stranger(scratch):
    server = Stranger()
    server.thread.start()
    yield server
    server.http.shutdown()
    server.http.server_close()


def test_an_html_page_is_a_client_error_not_a_traceback(stranger) -> None:
    with steepy.connect(stranger.url, token="t") as client:
        running = Submission.from_json({"id": "s1", "status": "RUNNING"}, client.backend)
        calls = {"submissions": client.submissions, "submission": lambda: client.submission("s1"),
                 "chain": lambda: client.chain("c"),
                 "services": client.services, "cancel": running.cancel, "retry": running.retry,
                 "events": lambda: list(running.events(follow=False)),
                 "chains": running.chains}
        for name, call in calls.items():
            with pytest.raises(steepy.ClientError, match=f"^{stranger.url}/.* {NOT_JSON}"):
                call()
        with pytest.raises(steepy.ClientError, match=(
                f"^{stranger.url}/workflows/s1/stream answered 200 with text/html, not a "
                r"stream of events: is it a steepy server\?$")):
            list(running.events())
        with pytest.raises(steepy.ClientError, match=(  # not the 202 of a steepy server
                f"^The server at {stranger.url} answered 200: text/html, not steepy's answer")):
            client.submit("greet.yaml")


def test_json_that_is_not_steepys_is_a_client_error(stranger) -> None:
    stranger.answers(lambda path: (200, "application/json", b'{"hello": "world"}'))
    with steepy.connect(stranger.url) as client:
        with pytest.raises(steepy.ClientError, match=(
                f"^{stranger.url}/workflows/s1 answered 200 with JSON without `id', not "
                r"steepy's answer: is it a steepy server\?$")):
            client.submission("s1")
        with pytest.raises(steepy.ClientError, match="with JSON that is an object, not steepy"):
            client.submissions()
    events = b"data: [1, 2]\n\ndata: {\"id\": 1}\n\nevent: end\ndata: {}\n\n"
    stranger.answers(lambda path: (200, "text/event-stream", events))
    with steepy.connect(stranger.url) as client:
        running = Submission.from_json({"id": "s1", "status": "RUNNING"}, client.backend)
        with pytest.raises(steepy.ClientError, match=(
                f"^{stranger.url}/workflows/s1/stream sent an event with JSON that is a list")):
            list(running.events())


def test_a_stream_that_ends_at_once_is_opened_again_after_a_while(stranger) -> None:
    """A stream that ends without its `end` is opened again: at once it would be hundreds of
    times a second while the submission runs."""
    finished_at = time.monotonic() + 1.6

    def answer(path: str) -> Answer:
        if path.startswith("/workflows/s1/stream"):
            return 200, "text/event-stream", b": nothing\n\n"
        if path.startswith("/workflows/s1/events"):
            return 200, "application/json", b"[]"
        status = "RUNNING" if time.monotonic() < finished_at else "SUCCESS"
        return 200, "application/json", b'{"id": "s1", "status": "%s"}' % status.encode()

    stranger.answers(answer)
    with steepy.connect(stranger.url) as client:
        running = Submission.from_json({"id": "s1", "status": "RUNNING"}, client.backend)
        assert list(running.events()) == []  # it ends once the submission has finished
    opened = [p for p in stranger.paths if p.startswith("/workflows/s1/stream")]
    assert 2 <= len(opened) <= 4  # at 0, 0.5 and 1.5 s (and once more under load)
