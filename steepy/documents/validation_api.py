"""Which API versions of workflows steepy reads, and the problem of one it does not."""

from __future__ import annotations

import re

from steepy.errors import Problem

MIN_API = (4, 0, 0)
MAX_API = (4, 7, 0)


def _version(text: str) -> tuple[int, int, int] | None:
    match = re.fullmatch(r"\s*(\d+)\.(\d+)\.(\d+)(?:[-+][0-9A-Za-z.+-]*)?\s*", str(text))
    return tuple(int(x) for x in match.groups()) if match else None  # type: ignore[return-value]


def api_problem(api: str) -> Problem | None:
    """A problem when the workflow's `api` is not a version steepy reads (4.0.0 to 4.7.0)."""
    version = _version(api)
    oldest, newest = (".".join(map(str, v)) for v in (MIN_API, MAX_API))
    supported = f"steepy reads workflows of API version {oldest} to {newest}"
    if version is None:
        return Problem(f"`{api}' is not an API version like `{newest}'; {supported}.", path="api")
    if version < MIN_API:
        return Problem(f"API version {api} is older than {oldest}: {supported}. Update the "
                       "workflow to the 4.x format (execute actions list their `inputs' and "
                       "`outputs'; for-each actions have type `for') and set "
                       f"`api: {newest}'.", path="api")
    if version > MAX_API:
        return Problem(f"API version {api} is newer than {newest}: {supported}. Use "
                       f"`api: {newest}' or a newer steepy.", path="api")
    return None
