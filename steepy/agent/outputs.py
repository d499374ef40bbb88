"""A chain's outputs: the directories to create before it runs, what an earlier attempt left
at an executable's output paths (removed before the next one starts), whether an executable
that exited 0 wrote what it declares (steepy's checked outputs), and its results after it
succeeded (reference section 3.1); an output adapter plugin makes the results of its data
type.

An output not seen at once is looked for again before it counts as missing: an NFS client
caches a file's absence (and a directory's listing) for some seconds, so its directory is
listed (which makes the client ask the server) and the file looked up again. Under a runtime
whose tools write on another machine (SLURM: its `outputs_settle_ms') the look is repeated
until that bound has passed. An output that is there is seen at once, and a local run that
did not write one fails at once.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from collections.abc import Collection
from typing import Awaitable, Callable

from steepy.model.processchain import DATA_TYPE_DIRECTORY, Argument, Executable, ProcessChain

__all__ = ["SETTLE_POLL_MS", "output_dirs", "clear_outputs", "left_outputs", "remove_left_outputs",
           "missing_output", "missing_output_settled", "collect_results"]

SETTLE_POLL_MS = 200  # between two looks for an output written on another machine

# (output argument, chain) -> its results, or None when no adapter handles its data type
OutputAdapt = Callable[[Argument, ProcessChain], "list | None"]


def output_dirs(chain: ProcessChain) -> list[str]:
    """Directories to create before the chain runs: each directory output itself and the
    parent of every other output."""
    dirs: dict[str, None] = {}
    for exe in chain.executables:
        for a in exe.arguments:
            if a.type != "output" or not a.variable.value:
                continue
            path = a.variable.value
            target = path if a.data_type == DATA_TYPE_DIRECTORY else os.path.dirname(path)
            if target:
                dirs[target] = None
    return list(dirs)


def left_outputs(exe: Executable) -> list[tuple[str, bool]]:
    """What is to be done at `exe`'s output paths before it runs (each path, and whether it
    is a directory output): an earlier attempt's leftovers, which must not pass for this
    attempt's work (a file half written before a failure would pass the output check, and a
    tool that makes its output with `mkdir' would fail on it). An output path is steepy's own
    (its tmp or out path, or a prefix, then a new id): nothing else is ever there. A
    directory output counts unless it is an empty folder (each attempt starts with one, as
    the first did: one the failed attempt removed is made again)."""
    left = []
    for a in exe.arguments:
        path = a.variable.value
        if a.type != "output" or not path:
            continue
        if a.data_type != DATA_TYPE_DIRECTORY:
            if os.path.lexists(path):
                left.append((path, False))
        elif not _real_directory(path) or not _empty(path):
            left.append((path, True))
    return left


def remove_left_outputs(left: list[tuple[str, bool]]) -> str | None:
    """Do what `left_outputs` found to do: remove a file or link (never what it points to)
    or a directory where a file was declared; empty a directory output (made readable first
    when it is ours), or make it (again) where it is not a folder. Everything that can be
    removed is, whatever cannot; why some could not be (a folder a container's root made),
    or None. The attempt then runs with that there, as it would have without this."""
    failed: list[str] = []
    for path, directory in left:
        try:
            if directory and _real_directory(path):
                _own(path)
                with os.scandir(path) as entries:
                    for entry in list(entries):
                        _remove(entry.path, failed)
            else:
                before = len(failed)
                _remove(path, failed)
                if directory and len(failed) == before:
                    os.makedirs(path, exist_ok=True)
        except OSError as e:
            failed.append(f"{e.filename or path}: {e.strerror or e}")
    if not failed:
        return None
    more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
    return f"cannot remove what an earlier attempt left at {failed[0]}{more}"


def clear_outputs(exe: Executable) -> tuple[list[tuple[str, bool]], str | None]:
    """`left_outputs` done with `remove_left_outputs` (blocking: call it in a thread, a
    network file system may be slow): what was found, and why some could not be removed."""
    left = left_outputs(exe)
    return left, remove_left_outputs(left) if left else None


def _real_directory(path: str) -> bool:
    return os.path.isdir(path) and not os.path.islink(path)


def _empty(path: str) -> bool:
    try:
        with os.scandir(path) as entries:
            return not any(True for _ in entries)
    except OSError:  # (unreadable: what is in it is to be seen to)
        return False


def _own(path: str) -> None:
    """A folder of ours that the tool made unreadable or unwritable (`chmod 000') is made
    ours to empty again."""
    st = os.stat(path)
    if st.st_uid == os.geteuid() and st.st_mode & 0o700 != 0o700:
        os.chmod(path, st.st_mode | 0o700)


def _remove(path: str, failed: list[str]) -> None:
    """Remove a file, link or folder (all it can of a folder), each failure into `failed`."""
    if not _real_directory(path):
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        except OSError as e:
            failed.append(f"{path}: {e.strerror or e}")
        return

    def refused(_function, where, info) -> None:
        error = info[1]
        failed.append(f"{where}: {getattr(error, 'strerror', None) or error}")

    shutil.rmtree(path, onerror=refused)


def missing_output(exe: Executable, adapted: Collection[str] = ()) -> str | None:
    """Why an executable that exited 0 has not done its job: the first output it declares
    that is not there (a file; a directory for the data type `directory`, made before it
    ran, so only one the tool removed), as `declared output `ID' was not written: PATH`.
    None when all are, or its service says `checkOutputs: false`. Outputs of `adapted` data
    types are their output adapter's (a plugin) to make sense of."""
    return _first_missing(exe, adapted, relist=False)


async def missing_output_settled(exe: Executable, adapted: Collection[str] = (),
                                 settle_ms: int = 0,
                                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                                 monotonic: Callable[[], float] = time.monotonic) -> str | None:
    """`missing_output', but what is not seen at once is looked for again (its directory
    listed first, in a thread: a network file system may be slow), for up to `settle_ms'
    when its tool wrote on another machine."""
    why = missing_output(exe, adapted)
    if why is None:
        return None
    ends = monotonic() + settle_ms / 1000
    while True:
        why = await asyncio.to_thread(_first_missing, exe, adapted, True)
        left = ends - monotonic()
        if why is None or left <= 0:
            return why
        await sleep(min(SETTLE_POLL_MS / 1000, left))


def _first_missing(exe: Executable, adapted: Collection[str], relist: bool) -> str | None:
    if not exe.check_outputs:
        return None
    for a in exe.arguments:
        path = a.variable.value
        if a.type != "output" or not path or a.data_type in adapted:
            continue
        directory = a.data_type == DATA_TYPE_DIRECTORY
        if _there(path, directory):
            continue
        if relist:
            _list(os.path.dirname(os.path.abspath(path)))
            if _there(path, directory):
                continue
        return f"declared output `{a.id}' was not written: {path}{_instead(path, directory)}"
    return None


def _there(path: str, directory: bool) -> bool:
    return os.path.isdir(path) if directory else os.path.exists(path) and not os.path.isdir(path)


def _instead(path: str, directory: bool) -> str:
    """What is at the path of an output that is not there as declared, said after it."""
    if os.path.islink(path) and not os.path.exists(path):
        return f" (a link to `{os.readlink(path)}', which does not exist)"
    if directory and os.path.lexists(path):
        return " (a file is there, not a directory: the output's data type is directory)"
    if not directory and os.path.isdir(path):
        return " (a directory is there, not a file)"
    return ""


def _list(directory: str) -> None:
    """List `directory' (an NFS client then asks the server instead of its cache)."""
    try:
        with os.scandir(directory) as entries:
            for _ in entries:
                pass
    except OSError:
        pass


def _files_below(directory: str) -> list[str]:
    found: list[str] = []
    for root, _dirs, files in os.walk(directory):
        found.extend(os.path.join(root, f) for f in files)
    return sorted(found)


def collect_results(chain: ProcessChain, adapt: OutputAdapt | None = None) -> dict[str, list]:
    """`{output variable id: [value]}`; a directory output lists the files below it; an
    output whose data type has an adapter gets what the adapter makes of it."""
    results: dict[str, list] = {}
    for exe in chain.executables:
        for a in exe.arguments:
            if a.type != "output":
                continue
            adapted = None if adapt is None else adapt(a, chain)
            if adapted is not None:
                results[a.variable.id] = adapted
            elif a.data_type == DATA_TYPE_DIRECTORY:
                results[a.variable.id] = _files_below(a.variable.value)
            else:
                results[a.variable.id] = [a.variable.value]
    return results
