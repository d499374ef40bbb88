"""A tool's process group, seen from the engine (extensions sections 7 and 8). The other
processes of an attempt, also those that left its group, are known to the executor
(steepy.agent.executor), which is the subreaper of every tool."""

from __future__ import annotations

import os

POLL_S = 0.01


def group_exists(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass
