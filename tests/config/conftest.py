"""What every configuration test shares."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def no_config_variables(monkeypatch):
    """The tests set the variables they need; none of the caller's apply."""
    for name in list(os.environ):
        if name.startswith(("STEEPY_", "STEEP_")) and name != "STEEP_CONFORMANCE_DIR":
            monkeypatch.delenv(name)
