"""The schema's revisions this steepy knows: its migrations (migrations/versions/), read from
the files (importing Alembic costs about 0.2 s a start, and a command that only reads an
SQLite file imports no SQLAlchemy either)."""

from __future__ import annotations

import re
from pathlib import Path

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def known_revisions() -> tuple[set[str], set[str]]:
    """Every migration this steepy has, and those another one builds on."""
    revisions, parents = set(), set()
    for path in (MIGRATIONS / "versions").glob("*.py"):
        source = path.read_text()
        for name, found in (("revision", revisions), ("down_revision", parents)):
            match = re.search(rf"^{name}\b[^=]*=\s*[\"']([^\"']+)[\"']", source, re.M)
            if match:
                found.add(match.group(1))
    return revisions, parents


def head_revisions() -> set[str]:
    """The newest migrations."""
    revisions, parents = known_revisions()
    return revisions - parents
