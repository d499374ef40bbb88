"""The stored results of work a submission reused (extensions 15), placed in its own output
folder at its end: an output an action stores (`store: true`) is a result the submission
keeps, so a submission that reused the chain writing it keeps it too, as running that chain
would have.

Only the submission's results move. Its reused chains keep the earlier paths, and so do the
chains after them, which read the earlier files: their keys, which count input files by
path, stay those of the earlier run, and they are reused as well. Each file is a hard link
to the earlier one where the file system allows (no copy of the data, however large), else a
copy, made beside it and renamed once whole. A result that cannot be placed (a full disk),
or that names a folder (a plugin's; a directory output's results are its files), keeps its
earlier path: the file is there, only not in the submission's own folder. Placing again
(after a crash, `steepy retry', an engine taking over) finds what was placed and keeps it,
also when the earlier file is gone or replaced since.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Collection

from steepy.generator.executables import flatten

log = logging.getLogger(__name__)
_PLACER = ThreadPoolExecutor(max_workers=4, thread_name_prefix="steepy-placing")


async def placing(results: dict[str, list], out_path: str, submission_id: str,
                  reused_from: Callable[[], Collection[str]]) -> dict[str, list]:
    """`placed_results` on threads of their own, where a result may be placed (else at once,
    with no thread: the results of a submission that reused nothing are its own). Where
    links are refused a copy may take minutes: on the threads of the registry's calls,
    submissions ending together would hold them all, and hold up the engine's heartbeat (on
    SQLite it beats there) until its lease ran out."""
    root = out_path.rstrip("/") + "/"
    if not any(_other_folder(v, root, submission_id) for v in flatten(list(results.values()))):
        return results
    return await asyncio.get_running_loop().run_in_executor(
        _PLACER, placed_results, results, out_path, submission_id, reused_from)


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
        folder = _other_folder(value, root, submission_id)
        if folder is None:
            return value
        if sources is None:
            sources = set(reused_from())
        if folder not in sources:
            return value
        new = f"{root}{submission_id}/{value[len(root) + len(folder) + 1:]}"
        return new if _placed(value, new) else value

    return {var: place(values) for var, values in results.items()}


def _other_folder(value: Any, root: str, submission_id: str) -> str | None:
    """The folder below the output folder `root` that holds the file `value` names, if it
    is not the submission's own (that of a submission it may have reused from)."""
    if not isinstance(value, str) or not value.startswith(root):
        return None
    folder, _, rest = value[len(root):].partition("/")
    return None if folder == submission_id or not rest else folder


def _placed(old: str, new: str) -> bool:
    """Whether `new` is (now) the earlier file `old`, linked or copied. A folder is left
    where it is (a directory output's results are its files, each placed on its own)."""
    if os.path.isdir(old):
        return False
    if _kept(new):  # placed before: a crash, `steepy retry', the engine that took over
        return True
    try:
        os.makedirs(os.path.dirname(new), exist_ok=True)
        try:
            os.link(old, new)
        except FileExistsError:  # (placed meanwhile by another engine)
            return _kept(new)
        except OSError:  # (another file system, or links refused: the data itself)
            _copy(old, new)
    except OSError as e:
        log.warning("a reused result could not be placed at %s (%s): the submission names "
                    "the earlier one, %s", new, e, old)
        return False
    return True


def _copy(old: str, new: str) -> None:
    """A copy of `old` at `new`, whole or not at all: written beside it under a name of its
    own (two engines placing at once, pid 1 in two containers, never write one part), then
    renamed (a crash leaves the part, never a part at `new`)."""
    handle, part = tempfile.mkstemp(prefix=os.path.basename(new) + ".part-",
                                    dir=os.path.dirname(new))
    os.close(handle)
    try:
        shutil.copy2(old, part)
        os.replace(part, new)
    finally:
        if os.path.lexists(part):
            os.unlink(part)


def _kept(new: str) -> bool:
    """Whether a file was placed at `new`: only placing writes there (the paths below a
    submission's folder are made of unique ids), as a link or as a copy that is renamed
    there once whole. It is the submission's, whatever became of the earlier file since:
    removed with its submission, or replaced (a retry then names the data it reused)."""
    return os.path.isfile(new)
