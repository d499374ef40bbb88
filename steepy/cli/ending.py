"""How the `steepy` process ends: with the interpreter's teardown, or quickly where the
command asked for it (`exit_quickly`). Apart from steepy/cli/group.py, so that the commands
can ask without importing the group that imports them."""

from __future__ import annotations

import atexit
import os
import sys
from typing import Callable

_quick_exit = False


def exit_quickly() -> None:
    """Let this process end without the interpreter's teardown once its command returns.

    A command asks for it when all it did is finished and stored: the engine of `steepy run`
    has stopped, drained its writers and closed its database connections. The teardown then
    only frees objects one by one (0.3-0.5 s after 1,000 chains, a twentieth of the run),
    which nobody needs. The atexit handlers still run (logging
    flushes there), and stdout and stderr are flushed."""
    global _quick_exit
    _quick_exit = True


def run_to_the_end(main: Callable[[], object]) -> None:
    """Run `main` (click's: it always raises SystemExit), then end the process, quickly where
    the command asked for it."""
    try:
        main()
    except SystemExit as e:
        if not _quick_exit:
            raise
        code = e.code
    else:  # main() always raises SystemExit; this is for safety's sake
        code = 0
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    atexit._run_exitfuncs()  # what the interpreter does first at exit (CPython, since 3.0)
    try:
        sys.stdout.flush()
    except OSError:  # the reader went away (a closed pipe): as Python itself would say
        code = code or 120
    try:
        sys.stderr.flush()
    except OSError:
        pass
    os._exit(code or 0)
