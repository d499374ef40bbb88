"""At a submission's end, the stored results of work it reused are placed in its own output
folder: hard links to the earlier files, or whole copies where links are refused; placing
again (after a crash, a retry, an engine taking over) keeps what is there; what cannot be
placed, and a result that names a folder, keeps its earlier path; and only results below
the folders of submissions it reused from move."""

from __future__ import annotations

import os
from pathlib import Path

from steepy.engine import storedresults
from steepy.engine.storedresults import placed_results


def _tree(out: Path) -> None:
    (out / "s1" / "folder").mkdir(parents=True)
    (out / "s1" / "a.txt").write_text("a")
    (out / "s1" / "folder" / "part-1").write_text("1")
    (out / "shared").mkdir()
    (out / "shared" / "x").write_text("x")


def test_results_of_reused_work_are_linked_into_the_submissions_folder(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _tree(out)
    asked: list[int] = []

    def reused_from() -> list[str]:
        asked.append(1)
        return ["s1"]

    results = {"a": [str(out / "s1" / "a.txt")], "parts": [str(out / "s1" / "folder" / "part-1")],
               "folder": [str(out / "s1" / "folder")], "own": [str(out / "s2" / "b.txt")],
               "other": [str(out / "shared" / "x")], "elsewhere": ["/data/y"]}
    placed = placed_results(results, str(out), "s2", reused_from)
    assert placed == {"a": [str(out / "s2" / "a.txt")],
                      "parts": [str(out / "s2" / "folder" / "part-1")],
                      "folder": results["folder"], "own": results["own"],
                      "other": results["other"], "elsewhere": ["/data/y"]}
    assert os.path.samefile(out / "s1" / "a.txt", out / "s2" / "a.txt")
    assert os.path.samefile(out / "s1" / "folder" / "part-1", out / "s2" / "folder" / "part-1")
    assert asked == [1]  # (asked once, and only because a path may have been reused)
    assert placed_results(results, str(out), "s2", reused_from) == placed  # placed again
    assert placed_results({"own": results["own"]}, str(out), "s2", reused_from) == {
        "own": results["own"]} and asked == [1, 1]


def test_where_links_are_refused_a_whole_copy_serves_and_serves_again(
        tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "out"
    _tree(out)

    def refused(old, new):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", refused)
    results = {"a": [str(out / "s1" / "a.txt")]}
    placed = placed_results(results, str(out), "s2", lambda: ["s1"])
    assert placed == {"a": [str(out / "s2" / "a.txt")]}
    assert (out / "s2" / "a.txt").read_text() == "a"
    assert not os.path.samefile(out / "s1" / "a.txt", out / "s2" / "a.txt")
    assert placed_results(results, str(out), "s2", lambda: ["s1"]) == placed  # (the copy)
    assert sorted(p.name for p in (out / "s2").iterdir()) == ["a.txt"]  # (no part left)


def test_a_result_that_cannot_be_placed_keeps_its_earlier_path(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _tree(out)
    (out / "s2").write_text("a file where the submission's folder would be")
    results = {"a": [str(out / "s1" / "a.txt")]}
    assert placed_results(results, str(out), "s2", lambda: ["s1"]) == results


def test_placing_again_keeps_what_was_placed_when_the_earlier_file_is_gone_or_replaced(
        tmp_path: Path) -> None:
    """`steepy retry` of the submission places again (its results were cleared): the earlier
    submission's file may have been collected meanwhile, or replaced; the file placed holds
    the data the submission reused, and its result names that, not the earlier path."""
    out = tmp_path / "out"
    _tree(out)
    results = {"a": [str(out / "s1" / "a.txt")]}
    placed = {"a": [str(out / "s2" / "a.txt")]}
    assert placed_results(results, str(out), "s2", lambda: ["s1"]) == placed
    (out / "s1" / "a.txt").unlink()
    (out / "s1" / "a.txt").write_text("replaced")
    assert placed_results(results, str(out), "s2", lambda: ["s1"]) == placed
    (out / "s1" / "a.txt").unlink()
    assert placed_results(results, str(out), "s2", lambda: ["s1"]) == placed
    assert (out / "s2" / "a.txt").read_text() == "a"


def test_a_link_another_engine_made_meanwhile_is_kept(tmp_path: Path, monkeypatch) -> None:
    """Two engines place at once (one lost its lease): the link the other made is taken as
    placed, never removed or copied over."""
    out = tmp_path / "out"
    _tree(out)
    real_link = os.link

    def raced(old, new):
        real_link(old, new)  # the other engine's, just before this one's
        real_link(old, new)

    monkeypatch.setattr(storedresults.os, "link", raced)
    results = {"a": [str(out / "s1" / "a.txt")]}
    assert placed_results(results, str(out), "s2", lambda: ["s1"]) == {
        "a": [str(out / "s2" / "a.txt")]}
    assert os.path.samefile(out / "s1" / "a.txt", out / "s2" / "a.txt")


async def test_copies_that_take_long_hold_up_none_of_the_registrys_threads(
        tmp_path: Path, monkeypatch) -> None:
    """Submissions ending together whose results are copied (links refused), each copy
    slow: they take turns on a thread of their own, and the registry's calls (the heartbeat
    on SQLite) go on meanwhile, however many there are."""
    import asyncio
    import threading

    from steepy.registry.offload import call

    out = tmp_path / "out"
    _tree(out)
    done = threading.Event()

    def slow_copy(old: str, new: str) -> None:
        done.wait(30)
        Path(new).write_text(Path(old).read_text())

    monkeypatch.setattr(storedresults, "_copy", slow_copy)
    monkeypatch.setattr(os, "link", lambda old, new: (_ for _ in ()).throw(
        PermissionError(1, "Operation not permitted")))
    ends = [asyncio.create_task(storedresults.placing(
        {"a": [str(out / "s1" / "a.txt")]}, str(out), f"s{n}", lambda: ["s1"]))
        for n in range(2, 42)]  # (more than the default pool has threads)
    await asyncio.sleep(0.1)
    assert await asyncio.wait_for(call(lambda: "a registry call"), 10) == "a registry call"
    done.set()
    placed = await asyncio.gather(*ends)
    assert placed[0] == {"a": [str(out / "s2" / "a.txt")]} and len(placed) == 40


def test_a_copy_is_written_under_a_name_no_other_engine_writes(tmp_path: Path,
                                                               monkeypatch) -> None:
    """Two engines with one pid (pid 1 in two containers) placing at once each write a part
    of their own."""
    import shutil

    out = tmp_path / "out"
    _tree(out)
    monkeypatch.setattr(os, "link", lambda old, new: (_ for _ in ()).throw(
        PermissionError(1, "Operation not permitted")))
    monkeypatch.setattr(os, "getpid", lambda: 1)
    parts: list[str] = []
    real_copy = shutil.copy2

    def copy(old: str, part: str) -> None:
        parts.append(part)
        real_copy(old, part)

    monkeypatch.setattr(shutil, "copy2", copy)
    for n in (2, 2):
        (out / f"s{n}" / "a.txt").unlink(missing_ok=True)
        assert placed_results({"a": [str(out / "s1" / "a.txt")]}, str(out), f"s{n}",
                              lambda: ["s1"]) == {"a": [str(out / f"s{n}" / "a.txt")]}
    assert len(set(parts)) == 2 and all(p.startswith(str(out / "s2" / "a.txt.part-"))
                                        for p in parts)


async def test_a_submission_whose_results_are_its_own_waits_for_no_copy(
        tmp_path: Path, monkeypatch) -> None:
    """Placing takes a thread only where a result may be placed: the end of a submission
    that reused nothing waits for no copy of another (here more slow copies than placing
    has threads)."""
    import asyncio
    import threading

    out = tmp_path / "out"
    _tree(out)
    done = threading.Event()
    monkeypatch.setattr(storedresults, "_copy", lambda old, new: done.wait(30))
    monkeypatch.setattr(os, "link", lambda old, new: (_ for _ in ()).throw(
        PermissionError(1, "Operation not permitted")))
    slow = [asyncio.create_task(storedresults.placing(
        {"a": [str(out / "s1" / "a.txt")]}, str(out), f"s{n}", lambda: ["s1"]))
        for n in range(2, 10)]
    await asyncio.sleep(0.1)
    own = {"z": [str(out / "s9" / "z.txt")], "x": ["/data/x"]}
    assert await asyncio.wait_for(storedresults.placing(
        own, str(out), "s9", lambda: ["s1"]), 10) == own
    done.set()
    await asyncio.gather(*slow)
