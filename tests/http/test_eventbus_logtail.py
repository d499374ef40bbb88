"""Following a chain's log file for `steep.logs.processchains.<id>`: only lines written after
the client registered, whole lines, each run's own file."""

from __future__ import annotations

from pathlib import Path

from steepy.agent import log_path
from steepy.http.eventbus.logtail import LogTail


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
