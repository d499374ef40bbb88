"""A reused chain's stored outputs are placed in the new submission's output folder: files
as hard links to the earlier ones, folders made anew with their files linked; when one
cannot be placed, none of the chain's is left behind (the chain runs instead)."""

from __future__ import annotations

import os
from pathlib import Path

from steepy.engine.storedcopies import place_stored


def test_files_and_folders_are_placed_as_links(tmp_path: Path) -> None:
    old = tmp_path / "out" / "s1"
    (old / "dir" / "sub").mkdir(parents=True)
    (old / "file").write_text("f")
    (old / "dir" / "sub" / "g").write_text("g")
    (old / "dir" / "link").symlink_to("sub/g")
    new = tmp_path / "out" / "s2"
    assert place_stored([(str(old / "file"), str(new / "a")),
                         (str(old / "dir"), str(new / "b"))])
    assert os.path.samefile(old / "file", new / "a")
    assert os.path.samefile(old / "dir" / "sub" / "g", new / "b" / "sub" / "g")
    assert os.readlink(new / "b" / "link") == "sub/g"  # a link stays a link


def test_when_one_cannot_be_placed_none_is(tmp_path: Path) -> None:
    old = tmp_path / "old"
    old.mkdir()
    (old / "file").write_text("f")
    (tmp_path / "blocked").write_text("a file where a folder would have to be")
    new = tmp_path / "new"
    assert not place_stored([(str(old / "file"), str(new / "a")),
                             (str(old / "file"), str(tmp_path / "blocked" / "b"))])
    assert not (new / "a").exists()
    assert not place_stored([(str(old / "gone"), str(new / "c"))])  # (the earlier file gone)
    assert sorted(p.name for p in new.iterdir()) == []
