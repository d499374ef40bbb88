"""The cycle collector of a process that runs an engine collects less often, and leaves what
was made before the engine started out of later collections."""

from __future__ import annotations

import gc

from steepy.engine.collector import THRESHOLDS, collect_less


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
