"""The stored results of a reused chain, placed in the new submission's output folder
(extensions 15): an output an action stores (`store: true`) is a result the submission keeps,
so a chain that reuses earlier work stores it again for its own submission, as running it
would have. Each file is a hard link to the earlier one where the file system allows (no
copy of the data, however large), else a copy; a folder is made anew with its files linked.

What was placed for a chain is removed again when a later file of it cannot be placed (a
full disk, another file system refusing links and copies alike): that chain then runs
instead of being reused. Its outputs' paths are new ones, under the new submission's
folder: nothing else writes there.
"""

from __future__ import annotations

import logging
import os
import shutil
from typing import Sequence

log = logging.getLogger(__name__)


def place_stored(pairs: Sequence[tuple[str, str]]) -> bool:
    """Each earlier file or folder (`old`) placed at its `new` path; False when one cannot
    be, and then none is."""
    placed: list[str] = []
    try:
        for old, new in pairs:
            _place(old, new)
            placed.append(new)
    except OSError as e:
        log.warning("a reused chain's stored output could not be placed at %s (%s): the "
                    "chain runs instead", new, e)
        for path in [*placed, new]:
            _remove(path)
        return False
    return True


def _place(old: str, new: str) -> None:
    os.makedirs(os.path.dirname(new) or ".", exist_ok=True)
    if os.path.isdir(old):
        shutil.copytree(old, new, symlinks=True, copy_function=_link_or_copy)
    else:
        _link_or_copy(old, new)


def _link_or_copy(old: str, new: str) -> None:
    try:
        os.link(old, new)
    except OSError:  # (another file system, or links refused: the data itself)
        shutil.copy2(old, new)


def _remove(path: str) -> None:
    """`path` gone, whatever it is (what `_place` made of it so far)."""
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as e:
        log.warning("a partly placed stored output could not be removed: %s (%s)", path, e)
