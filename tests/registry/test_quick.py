"""The reads of the commands that only read, through Python's own sqlite3 (quick.py) and
through SQLAlchemy (the registry every other part uses): the same SQL text (reads.py), the
same answers, to the type and the time zone; and when the quick way is not taken."""

from __future__ import annotations

import random
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import select, update

from steepy import events as ev
from steepy.model.attempt import AttemptRecord
from steepy.model.processchain import ProcessChain
from steepy.model.submission import ProcessChainStatus as CS
from steepy.registry import Registry, open_registry
from steepy.registry.leases import _lease_over
from steepy.registry.quick import QuickRegistry, quick_registry
from steepy.registry.records import add_event
from steepy.registry.tables import agents, submissions
from tests.engine.test_engine import _submit
from tests.registry.chains import store_chains

WORKFLOW = "api: 4.7.0\nname: quick\nactions: []\n"
NOW = datetime(2026, 11, 28, 17, 0, 0, 123456, tzinfo=timezone.utc)


def _filled(url: str) -> tuple[Registry, dict[str, str]]:
    """A submission with chains in every state reads show: succeeded after a retry, failed,
    paused (due again later), running, waiting, with a log in the database, a skipped
    action, agents; and a second, running one whose engine is gone."""
    registry = open_registry(url)
    sid = _submit(registry, WORKFLOW)
    store_chains(registry, sid, [ProcessChain(id=f"c{i}", required_capabilities=["x"] * (i == 4))
                                 for i in range(5)])
    t = [NOW + timedelta(seconds=s, microseconds=s * 7) for s in range(12)]
    attempts = [AttemptRecord("e", "s", 1, t[0], t[1], "FAILED", 3, last_lines=["no", "yes"],
                              message="exit 3", due_time=t[2], host="h"),
                AttemptRecord("e", "s", 2, t[2], t[3], "SUCCESS", 0)]
    claimed = [registry.queue.claim_chain("a1", only=sid) for _ in range(4)]
    runs = {record.chain.id: run for record, run in claimed}
    registry.queue.finish_run("c0", runs["c0"], "SUCCESS", CS.SUCCESS, submission_id=sid,
                              results={"out": ["/tmp/o"]}, attempts=attempts)
    registry.queue.finish_run("c1", runs["c1"], "ERROR", CS.ERROR, submission_id=sid,
                              error_message="boom", attempts=attempts[:1])
    registry.queue.finish_run("c2", runs["c2"], "PAUSED", CS.PAUSED, submission_id=sid,
                              auto_resume_after=t[5])
    registry.logs.append("c0", runs["c0"], 0, b"first line\n")
    registry.logs.append("c0", runs["c0"], 11, b"second line\n")
    registry.leases.heartbeat("engine-1", [{"id": "a1", "capabilities": ["x"], "chain_id": "c3",
                                            "host": "h", "pid": 1}], 30)
    with registry.db.write() as conn:
        add_event(conn, sid, ev.SubmissionActionSkipped(action_id="x$1", reason="it needs y"))
    lost = _submit(registry, WORKFLOW)
    with registry.db.write() as conn:
        conn.execute(update(submissions).where(submissions.c.id == lost).values(
            status="RUNNING", owner="gone", lease_until=NOW - timedelta(days=1)))
    return registry, {"submission": sid, "lost": lost}


# every read of the quick registry, with the arguments the commands give them
def _reads(ids: dict[str, str]) -> list[tuple[str, str, tuple]]:
    sid, lost = ids["submission"], ids["lost"]
    return [("views", "get_submission", (sid,)), ("views", "get_submission", ("nope",)),
            ("views", "submission_status", (sid,)), ("views", "list_submissions", ()),
            ("views", "list_submissions", ("RUNNING", 1, 0)),
            ("views", "submission_summaries", (None, 10, 0)),
            ("views", "submission_summaries", ("RUNNING", 1, 0)),
            ("views", "submission_summaries", (None, 1, 1)),
            ("views", "submission", (sid,)), ("views", "submission", (sid, False)),
            ("views", "chain_counts", (sid,)), ("views", "get_chain", ("c0",)),
            ("views", "get_chain", ("c2",)), ("views", "list_chains", (sid,)),
            ("views", "list_chains", (sid, "SUCCESS", 1, 0, True)),
            ("views", "list_chains", (None, None, None, 2)),
            ("views", "chains_after", (sid, 0, 2)), ("views", "chain_summaries", (sid,)),
            ("views", "chain_summaries", (sid, "REGISTERED", 5, 0)),
            ("views", "runs", ("c0",)), ("views", "submission_runs", (sid,)),
            ("views", "submission_runs", (sid, ["c1", "c2"])),
            ("views", "submission_runs", (sid, [])), ("views", "attempts", ("c0",)),
            ("views", "attempts", ("c0", 1)), ("views", "submission_attempts", (sid,)),
            ("views", "submission_attempts", (sid, ["c1"])), ("views", "events", (sid,)),
            ("views", "events", (sid, 3)), ("views", "skipped_actions", (sid,)),
            ("views", "agents", (3600,)), ("logs", "size", ("c0", 1)),
            ("logs", "size", ("c1", 1)), ("logs", "read", ("c0", 1, 0, 100)),
            ("logs", "read", ("c0", 1, 5, 15)), ("leases", "unowned", ([sid, lost],))]


def test_every_quick_read_answers_as_the_registry_does(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'steepy.db'}"
    registry, ids = _filled(url)
    quick = quick_registry(url)
    assert isinstance(quick, QuickRegistry)
    try:
        for part, name, args in _reads(ids):
            expected = getattr(getattr(registry, part), name)(*args)
            assert getattr(getattr(quick, part), name)(*args) == expected, (part, name, args)
        # the answers are not empty: the comparison compared something
        document = quick.views.submission(ids["submission"])
        assert document["succeededProcessChains"] == 1 and document["failedProcessChains"] == 1
        assert quick.views.get_chain("c0").results == {"out": ["/tmp/o"]}
        assert quick.views.attempts("c0")[0]["lastLines"] == ["no", "yes"]
        assert quick.views.attempts("c0")[0]["dueTime"] == "2026-11-28T17:00:02.123470Z"
        assert quick.views.skipped_actions(ids["submission"]) == {"x$1": "it needs y"}
        assert quick.logs.read("c0", 1, 5, 15) == b" line\nseco"
        assert list(quick.leases.unowned([ids["submission"], ids["lost"]])) == [ids["lost"]]
        assert quick.views.runs("c0")[0].start_time.tzinfo is not None
    finally:
        quick.release()
        registry.close()


def test_the_lease_rule_of_the_reads_is_the_engines(tmp_path) -> None:
    """`unowned' (SQL text, reads.py) and the engines' adoption (leases._lease_over, Core)
    say alike which running submissions no engine drives, over random leases and
    heartbeats."""
    url = f"sqlite:///{tmp_path / 'steepy.db'}"
    registry = open_registry(url)
    rng = random.Random(31)
    ids = [_submit(registry, WORKFLOW) for _ in range(60)]
    moments = [None] + [NOW + timedelta(seconds=s) for s in (-90, -30, -1, 0, 1, 30)]
    with registry.db.write() as conn:
        for sid in ids:
            conn.execute(update(submissions).where(submissions.c.id == sid).values(
                status=rng.choice(["RUNNING", "RUNNING", "SUCCESS"]),
                owner=rng.choice([None, "e1", "e2", "e3"]), lease_until=rng.choice(moments)))
        for i, owner in enumerate(["e1", "e2"]):
            seen = rng.choice(moments[1:])
            conn.execute(agents.insert().values(id=f"a{i}", owner=owner, last_seen=seen,
                                                start_time=seen, state_changed_time=seen))

    class Fixed:
        @staticmethod
        def now() -> datetime:
            return NOW

    registry.leases.clock = Fixed()
    found = registry.leases.unowned(ids)
    with registry.db.read() as conn:
        core = set(conn.execute(select(submissions.c.id).where(
            submissions.c.id.in_(ids), _lease_over(NOW, submissions.c.lease_until))).scalars())
    assert set(found) == core and 0 < len(core) < len(ids)
    registry.close()


def _stale(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("UPDATE alembic_version SET version_num = '0001'")


def _not_wal(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=DELETE")
    db.close()


@pytest.mark.parametrize("change, url", [
    (None, "sqlite:///{path}?mode=ro"), (None, "sqlite:///{dir}/missing.db"),
    (None, "sqlite:///{dir}"), (None, "postgresql+psycopg://nobody@127.0.0.1:1/x"),
    (_stale, "sqlite:///{path}"), (_not_wal, "sqlite:///{path}")],
    ids=["uri", "missing", "folder", "postgresql", "older-schema", "not-wal"])
def test_the_quick_way_is_not_taken_where_the_registry_must_say_or_do_more(
        tmp_path, change, url) -> None:
    path = tmp_path / "steepy.db"
    open_registry(f"sqlite:///{path}").close()
    if change is not None:
        change(path)
    assert quick_registry(url.format(path=path, dir=tmp_path)) is None


def test_a_file_that_is_no_database_is_left_to_the_registry(tmp_path) -> None:
    (tmp_path / "text.db").write_text("not a database")
    assert quick_registry(f"sqlite:///{tmp_path / 'text.db'}") is None


def test_a_database_failure_while_reading_is_said_as_the_registry_says_it(tmp_path) -> None:
    from steepy.registry.failures import DatabaseUnavailable

    url = f"sqlite:///{tmp_path / 'steepy.db'}"
    open_registry(url).close()
    quick = quick_registry(url)
    quick.connection.close()  # (as a file gone bad would: sqlite3 refuses the statement)
    with pytest.raises(DatabaseUnavailable, match=r"^database /.*steepy.db: .*closed"):
        quick.views.submission_summaries()
