"""Values of the API's JSON documents as Python values."""

from __future__ import annotations

from datetime import datetime
from typing import Any


def time_of(text: str | None) -> datetime | None:
    """An ISO 8601 time of a document (UTC, `...Z`) as an aware datetime."""
    return None if not text else datetime.fromisoformat(text)


def results_of(document: dict[str, Any]) -> dict[str, list]:
    """The `results` of a submission or chain: output variable id -> its values."""
    return dict(document.get("results") or {})
