"""The cycle collector of a process that runs an engine collects less often, and leaves what
was made before the engine started out of later collections."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest

from steepy.cli.collector import THRESHOLDS, collect_less


def test_collect_less_raises_the_thresholds_and_freezes_what_exists() -> None:
    before = gc.get_threshold()
    try:
        kept = [object() for _ in range(10)]  # made before: frozen with the rest
        collect_less()
        assert gc.get_threshold() == THRESHOLDS
        assert THRESHOLDS[0] > 700  # fewer young collections than Python's default (700)
        assert gc.get_freeze_count() > len(kept)
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


DRIVER = """
import gc, sys
from steepy.cli import group
sys.argv = ["steepy", "list"]
group.main = lambda: print(gc.get_threshold())
group.entry()
"""


@pytest.mark.process
def test_every_command_collects_as_seldom_from_its_start() -> None:
    """Before its command's imports, whatever the command (not only those that run an engine);
    a program that imports steepy keeps Python's thresholds."""
    done = subprocess.run([sys.executable, "-c", DRIVER], capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.strip() == str(THRESHOLDS), done.stderr
    imported = subprocess.run([sys.executable, "-c", "import gc, steepy.cli, steepy.api; "
                               "print(gc.get_threshold())"], capture_output=True, text=True,
                              timeout=60)
    assert imported.stdout.strip() == str(gc.get_threshold()) != str(THRESHOLDS), \
        imported.stderr
