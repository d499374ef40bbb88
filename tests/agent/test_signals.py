"""The signal file a tool may write (extensions 11): `requeue <duration>' or `prune [reason]'."""

from __future__ import annotations

import os

import pytest

from steepy.agent.signals import MAX_BYTES, Signal, SignalError, parse_signal, read_signal


@pytest.mark.parametrize("text, signal", [
    ("requeue 30s\n", Signal("requeue", delay_ms=30_000)),
    ("  requeue 1m 30s  ", Signal("requeue", delay_ms=90_000)),
    ("requeue 0ms", Signal("requeue", delay_ms=0)),
    ("prune", Signal("prune")),
    ("prune nothing new upstream\n\n", Signal("prune", reason="nothing new upstream")),
    ("\n  \n", None),
    ("", None),
])
def test_parse(text, signal):
    assert parse_signal(text) == signal


@pytest.mark.parametrize("text, says", [
    ("requeue", "`requeue' needs a duration"),
    ("requeue soon", "bad duration after `requeue'"),
    ("requeue 30", "bad duration after `requeue'"),
    ("retry 5s", "unknown signal;"),
    ("prune\nrequeue 1s", "more than one line (2)"),
])
def test_malformed_says_what_is_wrong(text, says):
    with pytest.raises(SignalError, match="signal file: ") as caught:
        parse_signal(text)
    assert says in str(caught.value)
    assert "soon" not in str(caught.value) and "retry" not in str(caught.value)


def test_prune_reason_is_one_bounded_line():
    signal = parse_signal("prune " + "x" * 500 + "\tend")
    assert signal is not None and len(signal.reason) == 200 and "\t" not in signal.reason


def test_read_file(tmp_path):
    path = tmp_path / "signal"
    assert read_signal(path) is None  # no file: no signal
    path.write_text("requeue 250ms\n")
    assert read_signal(path) == Signal("requeue", delay_ms=250)
    path.write_bytes(b"prune \xff")
    with pytest.raises(SignalError, match="not UTF-8"):
        read_signal(path)
    path.write_text("prune " + "y" * MAX_BYTES)
    with pytest.raises(SignalError, match=f"longer than {MAX_BYTES} bytes"):
        read_signal(path)
    with pytest.raises(SignalError, match="not a regular file"):
        read_signal(tmp_path)  # a directory


def test_only_a_file_the_tool_wrote_is_read(tmp_path):
    """A link (symbolic or hard) could name a file of the engine's; a FIFO would block."""
    secret = tmp_path / "secret"
    secret.write_text("requeue 1s")
    os.symlink(secret, tmp_path / "symbolic")
    with pytest.raises(SignalError, match="a symbolic link, not a file"):
        read_signal(tmp_path / "symbolic")
    os.link(secret, tmp_path / "hard")
    with pytest.raises(SignalError, match="a file with another name"):
        read_signal(tmp_path / "hard")
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(SignalError, match="not a regular file"):
        read_signal(tmp_path / "fifo")  # at once, though no one writes to it


def test_describe():
    assert Signal("requeue", 30_000).describe() == "the tool asked to be re-queued after 30s"
    assert Signal("prune", reason="done").describe() == "the tool pruned its chain: done"
