"""The `steepy` command line.

Exit codes: 0 fine, 1 a workflow ran and failed, 2 bad input (nothing stored or run),
3 cancelled, 4 the database cannot be used (full or read-only disk, server gone), 5 steepy
itself failed (a bug: the message says where).
"""

from __future__ import annotations

from steepy.cli.group import entry, main

__all__ = ["entry", "main"]

# the commands register themselves on `main'
from steepy.cli import (engine, files, manage, notifications, pilots, plugins,  # noqa: E402,F401
                        schedules, serve)
