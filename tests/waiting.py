"""Waiting in tests for something real (a job, a container) to be gone."""

from __future__ import annotations

import time
from collections.abc import Callable


def gone(still_there: Callable[[], object], within_s: float = 20, every_s: float = 0.2) -> bool:
    """Whether `still_there()' becomes falsy within `within_s' seconds."""
    end = time.monotonic() + within_s
    while still_there():
        if time.monotonic() > end:
            return False
        time.sleep(every_s)
    return True
