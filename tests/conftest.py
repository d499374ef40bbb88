"""Shared test set-up: where Steep's conformance data lives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent


def conformance_dir() -> Path:
    """Steep's conformance corpus: $STEEP_CONFORMANCE_DIR, else ../shared/conformance/steep."""
    env = os.environ.get("STEEP_CONFORMANCE_DIR")
    path = Path(env) if env else ROOT.parent / "shared" / "conformance" / "steep"
    if not path.is_dir():
        raise RuntimeError(f"conformance directory not found: {path} (set STEEP_CONFORMANCE_DIR)")
    return path


def load_conformance(name: str):
    """Parse one YAML file of the conformance corpus (relative path)."""
    with open(conformance_dir() / name, encoding="utf-8") as f:
        return yaml.safe_load(f)


def load_conformance_all(name: str) -> list:
    """Parse every YAML document of a multi-document conformance file."""
    with open(conformance_dir() / name, encoding="utf-8") as f:
        return list(yaml.safe_load_all(f))


@pytest.fixture
def conformance() -> Path:
    return conformance_dir()
