"""Following a chain's log for `steep.logs.processchains.<id>`: only lines written after the
client registered, whole lines, each run's own log; the file here, else the database's copy."""

from __future__ import annotations

from pathlib import Path

from steepy.agent import log_path
from steepy.http.eventbus.logtail import LogTail
from steepy.model import ProcessChain, Submission, Workflow
from steepy.registry import open_registry
from tests.registry.chains import store_chains


def _append(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)


def test_lines_written_after_the_first_look_whole_lines_only(tmp_path: Path) -> None:
    path = log_path(tmp_path, "c1", 1, 2)
    _append(path, "old\n")
    tail = LogTail(tmp_path, "c1", 2, None)
    assert tail.read() == []  # what was there before is not live
    _append(path, "one\ntw")
    [one] = tail.read()
    assert (one.address, one.body, one.headers) == ("steep.logs.processchains.c1", "one\n",
                                                    {"runNumber": "1"})
    assert tail.read() == []
    _append(path, "o ü\n\nthree\n")
    assert [m.body for m in tail.read()] == ["two ü\n", "\n", "three\n"]


def test_a_log_that_appears_later_is_read_from_its_start_and_so_is_a_new_run(
        tmp_path: Path) -> None:
    tail = LogTail(tmp_path, "c1")
    assert tail.read() == []
    _append(log_path(tmp_path, "c1", 1), "first\n")
    assert [m.body for m in tail.read()] == ["first\n"]
    _append(log_path(tmp_path, "c1", 2), "second run\n")
    tail.follow(2)
    [line] = tail.read()
    assert (line.body, line.headers) == ("second run\n", {"runNumber": "2"})


def test_a_log_run_on_another_machine_is_followed_in_the_database(tmp_path: Path) -> None:
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    registry.requests.add_submission(Submission(id="s", workflow=Workflow(name="s")))
    store_chains(registry, "s", [ProcessChain(id="c")], None)
    registry.logs.append("c", 1, 0, b"before\n")
    tail = LogTail(tmp_path / "not-here", "c", 0, 1, registry.logs)
    assert tail.read() == []  # what was stored before is not live
    registry.logs.append("c", 1, 7, b"after 1\naft")
    registry.logs.append("c", 1, 18, b"er 2\n")
    assert [(m.body, m.headers) for m in tail.read()] == [
        ("after 1\n", {"runNumber": "1"}), ("after 2\n", {"runNumber": "1"})]
    tail.follow(2)
    registry.logs.append("c", 2, 0, b"run 2\n")
    assert [m.body for m in tail.read()] == ["run 2\n"]
    # a file on this machine comes first
    _append(log_path(tmp_path / "not-here", "c", 2), "run 2\nlocal\n")
    assert [m.body for m in tail.read()] == ["local\n"]
