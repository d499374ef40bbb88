"""Signals from the tool (extensions 11): one line in the file named by `STEEPY_SIGNAL_FILE'.

The agent gives every attempt a fresh, empty path and reads it once the tool has ended,
whatever its exit code. The tool may write one line there:

* `requeue <DURATION>' (Steep's duration syntax: `requeue 30s', `requeue 1m 30s'): the same
  attempt runs again after that delay, and it does not count as an attempt;
* `prune [reason]': the chain ends here without an error and what depends on it is skipped.

No file, or an empty one, is no signal. Anything else (an unknown word, a missing or bad
duration, a second line, more than `MAX_BYTES', text that is not UTF-8) is a `SignalError'
whose message says what is wrong: the agent fails the attempt with it.

The file must be one the tool wrote: a symbolic link (under Docker it would be resolved on the
host), a FIFO or device (opening one would block), a directory or a file with a second name (a
hard link) is refused unread. No message quotes the file's text but for a prune's reason.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass
from typing import Literal

from steepy.errors import SteepyError
from steepy.model.durations import DurationError, format_duration, parse_duration
from steepy.model.ids import unique_id

__all__ = ["MAX_BYTES", "MAX_REASON", "MAX_REQUEUES", "SIGNAL_FILE", "SIGNAL_REASON",
           "PrunedByTool", "Signal", "SignalError", "parse_signal", "read_signal",
           "remove_signal", "signal_path"]

SIGNAL_FILE = "STEEPY_SIGNAL_FILE"  # the variable that names the file
MAX_BYTES = 4096  # a signal file longer than this is malformed
MAX_REASON = 200  # a prune reason is cut to this many characters
# `requeue' signals one executable may give (cut runs' included); the next one fails the attempt
MAX_REQUEUES = 100
SIGNAL_REASON = "signal from the tool"  # why an attempt was re-queued by a signal

_USAGE = "expected `requeue <duration>' (e.g. `requeue 30s') or `prune [reason]'"
_WRITE = "the tool must write its line into a new file there"


@dataclass(frozen=True)
class Signal:
    """What the tool asked for: `requeue' after `delay_ms', or `prune' (with `reason')."""

    kind: Literal["requeue", "prune"]
    delay_ms: int = 0
    reason: str = ""

    def describe(self) -> str:
        if self.kind == "requeue":
            return f"the tool asked to be re-queued after {format_duration(self.delay_ms)}"
        return "the tool pruned its chain" + (f": {self.reason}" if self.reason else "")


class SignalError(SteepyError, ValueError):
    """A signal file that cannot be read; the message says what is wrong."""


class PrunedByTool(SteepyError):
    """Raised by the agent when an attempt's tool wrote `prune': the executable ends, not in
    error. `reason' is the tool's (may be empty); `record' is the attempt's record. Its
    message is the signal's `describe()'."""

    def __init__(self, reason: str = "", record: object | None = None) -> None:
        super().__init__(Signal("prune", reason=reason).describe())
        self.reason = reason
        self.record = record


def parse_signal(text: str) -> Signal | None:
    """The signal in a file's text; None when it holds only blanks."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return None
    if len(lines) > 1:
        raise SignalError(f"signal file: more than one line ({len(lines)}); {_USAGE}")
    word, _, rest = lines[0].strip().partition(" ")
    rest = rest.strip()
    if word == "requeue":
        if not rest:
            raise SignalError("signal file: `requeue' needs a duration, e.g. `requeue 30s'")
        try:
            return Signal("requeue", delay_ms=parse_duration(rest))
        except DurationError:
            raise SignalError("signal file: bad duration after `requeue' (Steep's syntax, e.g. "
                              "`requeue 30s' or `requeue 1m 30s')") from None
    if word == "prune":
        return Signal("prune", reason=_cut(rest))
    raise SignalError(f"signal file: unknown signal; {_USAGE}")


def read_signal(path: str | os.PathLike[str]) -> Signal | None:
    """The signal the tool left at `path'; None when there is no file or it is empty.
    Raises `SignalError' for a malformed file, one that cannot be read, and one that is not a
    regular file with one name (a link, a FIFO, a device, a directory: not read at all).
    Never blocks: a FIFO is opened without waiting for a writer."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise SignalError(f"signal file: a symbolic link, not a file; {_WRITE}") from None
        raise SignalError(f"signal file: cannot read it: {e.strerror or e}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SignalError(f"signal file: not a regular file; {_WRITE}")
        if info.st_nlink > 1:
            raise SignalError(f"signal file: a file with another name (a hard link); {_WRITE}")
        data = b""
        while len(data) <= MAX_BYTES:
            more = os.read(fd, MAX_BYTES + 1 - len(data))
            if not more:
                break
            data += more
    except OSError as e:
        raise SignalError(f"signal file: cannot read it: {e.strerror or e}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:
        raise SignalError(f"signal file: longer than {MAX_BYTES} bytes; {_USAGE}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise SignalError("signal file: not UTF-8 text") from None
    return parse_signal(text)


def signal_path(directory: str, chain_id: str) -> str:
    """A fresh path for one attempt's signal file in `directory' (steep.tmpPath: containers
    mount it at the same path, and on a cluster it lies on the shared file system)."""
    return os.path.join(directory, f".steepy-signal-{_UNSAFE.sub('-', chain_id)}-{unique_id()}")


def remove_signal(path: str) -> None:
    """Remove an attempt's signal file (there may be none)."""
    try:
        os.unlink(path)
    except OSError:  # none, or e.g. a directory the tool made there: that is the tool's
        pass


_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def _cut(text: str, limit: int = MAX_REASON) -> str:
    """`text' on one line, at most `limit' characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
