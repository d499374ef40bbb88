"""The stored results of work a submission reused (extensions 15), placed in its own output
folder at its end: an output an action stores (`store: true`) is a result the submission
keeps, so a submission that reused the chain writing it keeps it too, as running that chain
would have.

Only the submission's results move. Its reused chains keep the earlier paths, and so do the
chains after them, which read the earlier files: their keys, which count input files by
path, stay those of the earlier run, and they are reused as well. Each file is a hard link
to the earlier one where the file system allows (no copy of the data, however large), else a
copy; a folder is made anew with its files linked. A result that cannot be placed (a full
disk) keeps its earlier path: the file is there, only not in the submission's own folder.
Placing again after a crash finds the link it made and keeps it.
"""

from __future__ import annotations

import logging
import os
import shutil
from typing import Any, Callable, Collection

log = logging.getLogger(__name__)


def placed_results(results: dict[str, list], out_path: str, submission_id: str,
                   reused_from: Callable[[], Collection[str]]) -> dict[str, list]:
    """`results` (variable -> paths, the submission's) with each path below the output
    folder of a submission this one reused from (`reused_from()`, asked only when there is
    such a path) placed below its own: `<outPath>/<that id>/x` -> `<outPath>/<this id>/x`."""
    root = out_path.rstrip("/") + "/"
    sources: Collection[str] | None = None

    def place(value: Any) -> Any:
        nonlocal sources
        if isinstance(value, list):
            return [place(v) for v in value]
        if not isinstance(value, str) or not value.startswith(root):
            return value
        folder, _, rest = value[len(root):].partition("/")
        if folder == submission_id or not rest:
            return value
        if sources is None:
            sources = set(reused_from())
        if folder not in sources:
            return value
        new = f"{root}{submission_id}/{rest}"
        return new if _placed(value, new) else value

    return {var: place(values) for var, values in results.items()}


def _placed(old: str, new: str) -> bool:
    """Whether `new` is (now) the earlier file or folder `old`, linked or copied."""
    if os.path.lexists(new):  # (placed before a crash, or another result's folder)
        return _same(old, new)
    try:
        os.makedirs(os.path.dirname(new), exist_ok=True)
        if os.path.isdir(old):
            shutil.copytree(old, new, symlinks=True, copy_function=_link_or_copy)
        else:
            _link_or_copy(old, new)
    except OSError as e:
        log.warning("a reused result could not be placed at %s (%s): the submission names "
                    "the earlier one, %s", new, e, old)
        _remove(new)
        return False
    return True


def _same(old: str, new: str) -> bool:
    try:
        if os.path.isdir(old):
            return os.path.isdir(new)  # (its files were linked one by one)
        return os.path.samefile(old, new)
    except OSError:
        return False


def _link_or_copy(old: str, new: str) -> None:
    try:
        os.link(old, new)
    except OSError:  # (another file system, or links refused: the data itself)
        shutil.copy2(old, new)


def _remove(path: str) -> None:
    """What a failed placing left at `path`."""
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.unlink(path)
    except OSError as e:
        log.warning("a partly placed result could not be removed: %s (%s)", path, e)
