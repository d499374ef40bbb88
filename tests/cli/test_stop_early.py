"""Ctrl-C while `steepy worker' or `steepy serve' starts, before the engine's (or the
server's) own handler is in place: the clean stop their help promises (exit code 0), not
click's `Aborted!' and exit code 1, which a service manager or a script reads as a failure
(an operator's review)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = [pytest.mark.process]

# the program's entry as the console script runs it, with a command that is interrupted
# while it starts (deterministically: it sends itself SIGINT)
DRIVER = textwrap.dedent("""
    import os, signal, sys, time
    sys.argv = ["steepy", *sys.argv[1:]]
    from steepy.cli import group
    def starting():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(10)
    group.main = starting
    group.entry()
""")


@pytest.mark.parametrize("command", ["worker", "serve"])
def test_ctrl_c_while_starting_is_a_clean_stop(command) -> None:
    done = subprocess.run([sys.executable, "-c", DRIVER, command], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr == f"steepy {command}: stopped before it started\n"


def test_other_commands_keep_python_s_ctrl_c() -> None:
    done = subprocess.run([sys.executable, "-c", DRIVER, "list"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode != 0 and "KeyboardInterrupt" in done.stderr
