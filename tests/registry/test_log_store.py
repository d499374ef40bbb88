"""Chains' output in the database: appended in chunks, read back by any byte range."""

from __future__ import annotations

from datetime import timedelta

from steepy.model import ProcessChain, Submission, Workflow
from steepy.registry import open_registry
from steepy.registry.records import utcnow
from tests.registry.chains import store_chains


def test_chunks_are_read_back_by_any_range(database_url: str) -> None:
    registry = open_registry(database_url)
    registry.requests.add_submission(Submission(id="s", workflow=Workflow(name="s")))
    store_chains(registry, "s", [ProcessChain(id="c")], None)
    logs = registry.logs
    assert logs.size("c", 1) is None
    text = b"".join(f"line {i}\n".encode() for i in range(200))
    for start in range(0, len(text), 97):  # chunks as the agent ships them
        logs.append("c", 1, start, text[start:start + 97])
    logs.append("c", 2, 0, b"second run\n")
    assert logs.size("c", 1) == len(text) and logs.size("c", 2) == 11
    assert logs.read("c", 1, 0, len(text)) == text
    for start, end in [(0, 1), (5, 300), (96, 98), (97, 194), (len(text) - 3, len(text) + 50),
                       (500, 500), (1000, 999)]:
        assert logs.read("c", 1, start, end) == text[start:end], (start, end)
    assert logs.forget(utcnow() - timedelta(hours=1)) == 0
    assert logs.forget(utcnow() + timedelta(seconds=1)) > 0
    assert logs.size("c", 1) is None
