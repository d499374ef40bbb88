"""Bodies over http.postMaxSize (default 10 MB) are refused by the real server."""

from __future__ import annotations

LIMIT = 10 * 1024 * 1024


def test_large_bodies_get_413(server) -> None:
    big = b"#" * (LIMIT + 1)
    response = server.http.post("/workflows", content=big)
    assert response.status_code == 413 and str(LIMIT) in response.text
    streamed = server.http.post("/workflows", content=(b"#" * 65536 for _ in range(161)))
    assert streamed.status_code == 413
    fits = server.http.post("/workflows", content=b"#" * 1000 + b"\n")
    assert fits.status_code == 400  # read, and found to be no workflow
