"""The registry in memory (`memory_registry`, tests/conftest.py) is the registry of a file:
the same schema and revision, the same answers, one database for every thread."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import inspect, text

from steepy.model import Submission, Workflow
from steepy.model.submission import SubmissionStatus as SS
from steepy.registry import Registry, open_registry
from tests.conftest import open_memory_registry


def _schema(registry: Registry) -> dict:
    with registry.engine.connect() as conn:
        found = inspect(conn)
        tables = {t: sorted(c["name"] for c in found.get_columns(t))
                  for t in found.get_table_names()}
        revisions = set(conn.execute(text("SELECT version_num FROM alembic_version")).scalars())
    return {"tables": tables, "revisions": revisions}


def test_the_schema_and_revision_of_a_file(memory_registry: Registry, tmp_path) -> None:
    on_file = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    try:
        assert _schema(memory_registry) == _schema(on_file)
    finally:
        on_file.close()
    assert memory_registry.db.file is None  # nothing on disk to watch


@pytest.fixture(params=["file", "memory"])
def either(request, tmp_path):
    registry = (open_registry(f"sqlite:///{tmp_path / 'steepy.db'}") if request.param == "file"
                else open_memory_registry())
    yield registry
    registry.close()


def test_the_same_answers(either: Registry) -> None:
    for sid, priority in (("a", 0), ("b", 5), ("c", -1)):
        either.requests.add_submission(
            Submission(id=sid, workflow=Workflow(name=sid, priority=priority), name=sid,
                       priority=priority))
    assert either.leases.fetch_next_submission().id == "b"
    page, total = either.views.list_submissions(size=2)
    assert total == 3 and [s.id for s in page] == ["c", "b"]
    assert either.views.get_submission("b").status == SS.RUNNING


def test_every_thread_sees_the_one_database(memory_registry: Registry) -> None:
    """Offloaded calls run in other threads: they must find what this one wrote (a pool of a
    connection per thread would give each an empty database of its own)."""
    memory_registry.requests.add_submission(Submission(id="s", workflow=Workflow(name="s"),
                                                       name="s"))
    seen: list = []
    worker = threading.Thread(target=lambda: seen.append(
        memory_registry.views.get_submission("s").status))
    worker.start()
    worker.join(10)
    assert seen == [SS.ACCEPTED]
