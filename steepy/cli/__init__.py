"""The `steepy` command line.

Exit codes: 0 fine, 1 a workflow ran and failed, 2 bad input (nothing stored or run; also an
unknown id, or no database where a command only reads), 3 cancelled, 4 the database cannot be
used (full or read-only disk, server gone), 5 steepy itself failed (a bug: the message says
where). Each command's --help lists its own (steepy/cli/helptext.py).
"""

from __future__ import annotations

from steepy.cli.group import entry, main

__all__ = ["entry", "main"]
# (the commands are in steepy.cli.group's COMMANDS; each module is imported when its command
# is used)
