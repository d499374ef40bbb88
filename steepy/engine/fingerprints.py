"""What a file or folder looks like, for the keys of reusable work (extensions 15): the
engine's side of steepy.model.cachekeys, which reads the file system only through the
`Fingerprints` it is given.

- A file: its size and modification time in nanoseconds (`[size, mtime]`; a link also by
  the file it names), or, in `deep` mode, the sha256 of its content (`{"sha256"}`). What is not a regular file (a socket, a
  FIFO in a folder) is never opened: its size and time stand for it in both modes.
- A folder, whatever the input's data type (a `.` given as text is a folder a tool may
  read): every file and folder below it, through links to folders too (each folder once;
  a link, the folder given included, by the folder it names too),
  as the sha256 of their paths and fingerprints with their number (`{"files", "tree"}`,
  and `"deep": true` in deep mode). A record holds that, not the listing of 100,000 files.
- What cannot be compared, `UNCOMPARABLE` (cachekeys): a folder of more than `TREE_FILES`
  files and folders (`/` given as text) or with a folder below that cannot be listed, or a
  file that cannot be read in deep mode. A chain with such
  an input is never reused nor recorded, and `steepy plan --resume` says why.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from itertools import islice
from typing import Any

from steepy.model.cachekeys import UNCOMPARABLE, digest

HASHES_KEPT = 100_000  # content hashes remembered, at most (about 35 MB)
TREE_FILES = 100_000  # files below a folder, at most, for it to be compared


class Fingerprints:
    """What files and folders look like (module docstring). Content hashes are remembered
    while size, modification time, inode and change time stay (the `HASHES_KEPT` latest).

    A look serves again while it is younger than `fresh_s` (counted from when it began),
    whatever round asks (each submission has looks of its own: `Reuse.scoped`): the tool of
    10,000 executables is looked at about once a second, and a join over the outputs of
    10,000 chains that the round before checked looks at them again only when it comes
    later than that. No look is used older: a file changed since is seen changed by every
    key made more than `fresh_s` after."""

    def __init__(self, fresh_s: float = 1.0,
                 hashes: dict[tuple[str, int, int, int, int], str] | None = None) -> None:
        self._hashes: dict[tuple[str, int, int, int, int], str] = {} if hashes is None else hashes
        self._seen: dict[tuple[str, bool], tuple[Any, float]] = {}  # -> (look, when begun)
        self.fresh_s = fresh_s
        self.used = time.monotonic()  # when a round last began with these looks

    def alike(self) -> "Fingerprints":
        """New, with no looks, the same `fresh_s` and these content hashes (shared: they
        hold while the file's stat does)."""
        return Fingerprints(self.fresh_s, hashes=self._hashes)

    def anew(self) -> None:
        """A round begins: the looks too old to serve again are let go."""
        self.used = time.monotonic()
        oldest = self.used - self.fresh_s
        if self._seen:
            self._seen = {k: seen for k, seen in self._seen.items() if seen[1] > oldest}

    def __call__(self, path: str, deep: bool) -> Any:
        now = time.monotonic()
        seen = self._seen.get((path, deep))
        if seen is None or now - seen[1] >= self.fresh_s:
            seen = self._seen[path, deep] = (self._look(path, deep), now)
        return seen[0]

    def anew_for(self, path: str, deep: bool) -> Any:
        """Looked at now, whatever was seen before (the outputs a chain has just written, the
        inputs it read; what the other mode saw of it is let go)."""
        self._seen.pop((path, not deep), None)
        now = time.monotonic()
        seen = self._seen[path, deep] = (self._look(path, deep), now)
        return seen[0]

    def _look(self, path: str, deep: bool) -> Any:
        try:
            st, linked = _stat(path)
        except (OSError, ValueError):
            return None
        if not stat.S_ISDIR(st.st_mode):
            return self._file(path, deep, st, linked)
        files = files_below(path)
        if files is None:
            return UNCOMPARABLE
        listing = []
        for f in files:
            if f.endswith("/"):  # a folder: by its name (what is in it is listed too), and
                # a link by the folder it names (another of the same files is other data)
                linked_to = os.path.realpath(f) if os.path.islink(f[:-1]) else None
                listing.append([os.path.relpath(f, path) + "/", linked_to])
                continue
            look = self._file(f, deep)
            if look == UNCOMPARABLE:
                return UNCOMPARABLE
            listing.append([os.path.relpath(f, path), look])
        tree: dict[str, Any] = {"files": len(listing), "tree": digest(listing)}
        if linked:  # a link to a folder: by the folder it names, too
            tree["target"] = os.path.realpath(path)
        return {**tree, "deep": True} if deep else tree

    def _file(self, path: str, deep: bool, st: os.stat_result | None = None,
              linked: bool = False) -> Any:
        try:
            if st is None:
                st, linked = _stat(path)
        except OSError:
            return None
        if not deep or not stat.S_ISREG(st.st_mode):  # (a FIFO would block a read)
            if linked:  # which file it names, too (another of its size and time is other)
                return [st.st_size, st.st_mtime_ns, os.path.realpath(path)]
            return [st.st_size, st.st_mtime_ns]
        # (the inode and its change time too: `cp -p', `rsync -t' and `touch -r' give new
        # content the size and modification time of the old, but nobody sets the change time)
        memo = (path, st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)
        if memo not in self._hashes:
            content = hashlib.sha256()
            try:
                with open(path, "rb") as f:
                    for block in iter(lambda: f.read(1 << 20), b""):
                        content.update(block)
            except OSError:  # (not ours to read: its content cannot be compared)
                return UNCOMPARABLE
            if len(self._hashes) >= HASHES_KEPT:  # (a worker's whole life: the older half go)
                for old in list(islice(self._hashes, HASHES_KEPT // 2)):
                    del self._hashes[old]
            self._hashes[memo] = content.hexdigest()
        return {"sha256": self._hashes[memo]}


def _stat(path: str) -> tuple[os.stat_result, bool]:
    """What `path` names (through a link), and whether it is a link: one call for a path
    that is none."""
    st = os.lstat(path)
    linked = stat.S_ISLNK(st.st_mode)
    return (os.stat(path) if linked else st), linked


def taken_deep(seen: Any) -> bool:
    """Whether a fingerprint was taken in `deep' mode (a content hash, or a deep tree)."""
    return isinstance(seen, dict) and ("sha256" in seen or seen.get("deep") is True)


def files_below(directory: str, limit: int | None = None) -> list[str] | None:
    """The files below `directory`, and its folders (ending in `/': an empty one a tool may
    look into counts too), also below links to folders (a tool reads through them), each
    folder once (a link to a folder above would never end); None when there are more than
    `limit` (`TREE_FILES`), or a folder below cannot be listed (its files would be left
    out, and a change in them missed)."""
    limit = TREE_FILES if limit is None else limit
    found: list[str] = []
    seen: set[tuple[int, int]] = set()
    refused: list[OSError] = []
    for root, dirs, files in os.walk(directory, onerror=refused.append, followlinks=True):
        try:
            st = os.stat(root)
        except OSError:
            return None
        if (st.st_dev, st.st_ino) in seen:
            dirs[:] = []
            continue
        seen.add((st.st_dev, st.st_ino))
        found.extend(os.path.join(root, f) for f in files)
        found.extend(os.path.join(root, d) + "/" for d in dirs)
        if len(found) > limit or refused:
            return None
    return None if refused else sorted(found)
