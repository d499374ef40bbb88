"""Logs through a real `steepy serve` as Steep's web UI reads them: `x-range` answered with
200 and `x-content-range` (Steep's own header pair), an empty log with 200, while the
standard `Range` keeps its 206; a run that printed nothing has no log (404), as in Steep."""

from __future__ import annotations

from tests.engine.workflows import FAILS_ONCE

NAP = """
api: 4.7.0
name: a silent tool
actions:
  - {id: nap, type: execute, service: sleep, inputs: [{id: seconds, value: 0.1}]}
"""


def _log_of(server, text: str) -> str:
    sid = server.submit(text)
    server.wait(sid)
    (chain,) = server.http.get("/processchains", params={"submissionId": sid}).json()
    return f"/logs/processchains/{chain['id']}"


def test_x_range_is_answered_with_200_and_x_content_range(server, tmp_path) -> None:
    path = _log_of(server, FAILS_ONCE % (tmp_path / "state"))
    text = server.http.get(path).content
    size = len(text)
    assert size > 20
    # what Steep's UI sends first: the last 2 MB (here: all of it)
    tail = server.http.get(path, headers={"accept": "text/plain", "x-range": "bytes=-2000000"})
    assert tail.status_code == 200 and tail.content == text
    assert tail.headers["x-content-range"] == f"bytes 0-{size - 1}/{size}"
    assert "content-range" not in tail.headers
    assert tail.headers["content-length"] == str(size)
    part = server.http.get(path, headers={"x-range": "bytes=5-14"})
    assert part.status_code == 200 and part.content == text[5:15]
    assert part.headers["x-content-range"] == f"bytes 5-14/{size}"
    last = server.http.get(path, headers={"x-range": "bytes=-7"})
    assert last.content == text[-7:]
    assert last.headers["x-content-range"] == f"bytes {size - 7}-{size - 1}/{size}"
    # the UI's "load more": the bytes before what it has
    before = server.http.get(path, headers={"x-range": f"bytes=0-{size - 8}"})
    assert before.status_code == 200 and before.content + last.content == text
    # x-range wins over Range (Steep reads it first)
    both = server.http.get(path, headers={"x-range": "bytes=0-3", "Range": "bytes=4-9"})
    assert both.status_code == 200 and both.content == text[:4]
    assert both.headers["x-content-range"] == f"bytes 0-3/{size}"
    head = server.http.head(path, headers={"x-range": "bytes=2-2"})
    assert head.status_code == 200 and head.headers["x-content-range"] == f"bytes 2-2/{size}"
    assert head.headers["content-length"] == "1" and head.content == b""
    for bad in (f"bytes={size}-", "bytes=9-3", "lines=1-2"):
        assert server.http.get(path, headers={"x-range": bad}).status_code == 416, bad
    # the standard header keeps its meaning
    standard = server.http.get(path, headers={"Range": "bytes=5-14"})
    assert standard.status_code == 206 and standard.content == text[5:15]
    assert standard.headers["content-range"] == f"bytes 5-14/{size}"
    assert "x-content-range" not in standard.headers


def test_a_silent_run_has_no_log_and_an_empty_log_is_200_with_and_without_a_range(
        server) -> None:
    path = _log_of(server, NAP)  # `sleep` writes nothing
    # as in Steep, the file comes with the first line: a run that printed nothing has none
    for method in ("GET", "HEAD"):
        assert server.http.request(method, path).status_code == 404
    assert server.http.get(path, headers={"x-range": "bytes=-10"}).status_code == 404
    # the UI's page says so, and offers no download of it (that was the 404 above)
    page = server.http.get(path, headers={"accept": "text/html"})
    assert page.status_code == 200 and "printed nothing" in page.text
    assert 'data-testid="download"' not in page.text
    # a log file can still be empty (emptied by hand, written by an older steepy)
    chain_id = path.rsplit("/", 1)[1]
    (server.directory / "logs").mkdir(exist_ok=True)
    (server.directory / "logs" / f"{chain_id}.log").write_bytes(b"")
    whole = server.http.get(path)
    assert whole.status_code == 200 and whole.content == b""
    assert whole.headers["content-length"] == "0"
    ui = server.http.get(path, headers={"accept": "text/plain", "x-range": "bytes=-2000000"})
    assert ui.status_code == 200 and ui.content == b""
    assert ui.headers["x-content-range"] == "bytes 0--1/0"  # what Steep says
    assert ui.headers["content-length"] == "0"
    suffix = server.http.get(path, headers={"Range": "bytes=-100"})
    assert suffix.status_code == 200 and suffix.content == b""  # nothing to cut
    assert "content-range" not in suffix.headers
    head = server.http.head(path, headers={"x-range": "bytes=-2000000"})
    assert head.status_code == 200 and head.headers["x-content-range"] == "bytes 0--1/0"
    # a start inside the log cannot be satisfied by an empty one (Steep: 416 too)
    for header in ("Range", "x-range"):
        refused = server.http.get(path, headers={header: "bytes=0-"})
        assert refused.status_code == 416 and refused.headers["content-range"] == "bytes */0"
