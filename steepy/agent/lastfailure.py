"""What a tool learns of the attempt that failed before it (extensions 3):
`STEEPY_LAST_FAILED_AT' (when it ended, ISO 8601 in UTC) and `STEEPY_LAST_MESSAGE' (its error
message on one line). Both are empty on a first attempt.

The message is made from the attempt's record, so a run that goes on from cut runs tells the
same as the run that saw the failure. It never holds the command line (a runtime's command
may carry settings such as `-e NAME=value'), it is one line of at most `MAX_CHARS'
characters, and where it would hold the value of a secret the engine keeps to itself (a
`STEEPY_*' or `STEEP_*' variable named like a token, password, secret, key or URL, e.g.
`STEEPY_HTTP_TOKEN', or the password in `STEEPY_DB_URL') that value is replaced by `***'.
"""

from __future__ import annotations

import re
from datetime import timezone
from urllib.parse import urlsplit

from steepy.agent.environment import environment, is_engine_setting
from steepy.model.attempt import AttemptRecord

__all__ = ["LAST_FAILED_AT", "LAST_MESSAGE", "MAX_CHARS", "last_failure_env", "one_line"]

LAST_FAILED_AT = "STEEPY_LAST_FAILED_AT"
LAST_MESSAGE = "STEEPY_LAST_MESSAGE"
MAX_CHARS = 1000
_MIN_SECRET = 4  # shorter values are no secrets and would spoil every message
_SECRET_NAME = re.compile(r"TOKEN|PASSWORD|PASSWD|SECRET|KEY|URL|CREDENTIAL")

# failure_message's "`COMMAND' exited with code 3": the command goes (greedy: the last quote)
_COMMAND = re.compile(r"( failed: )`.*' ((?:exited with code|was killed by signal) )")
_LAST_OUTPUT = ". Last output:"


def last_failure_env(record: AttemptRecord | None) -> dict[str, str]:
    """The two variables for the attempt after `record' (None: there was no failure)."""
    if record is None:
        return {LAST_FAILED_AT: "", LAST_MESSAGE: ""}
    ended = record.end_time or record.start_time
    if ended.tzinfo is None:
        ended = ended.replace(tzinfo=timezone.utc)
    at = ended.astimezone(timezone.utc).isoformat(timespec="milliseconds")
    return {LAST_FAILED_AT: at.replace("+00:00", "Z"), LAST_MESSAGE: one_line(record)}


def one_line(record: AttemptRecord) -> str:
    """The record's message without the command, its last output line appended."""
    text = record.message or f"attempt {record.attempt} ended {record.outcome}"
    head, _, _ = text.partition("\n")
    head = _COMMAND.sub(r"\1\2", head, count=1)
    if head.endswith(_LAST_OUTPUT):
        head = head[: -len(_LAST_OUTPUT)]
    last = next((line for line in reversed(record.last_lines) if line.strip()), None)
    if last is not None:
        head += f"; last output: {last}"
    return _cut(_redacted(" ".join(head.split())))


def _redacted(text: str) -> str:
    for value in _secrets():
        text = text.replace(value, "***")
    return text


def _secrets() -> list[str]:
    """The values to hide, longest first (a URL before the password inside it)."""
    found: set[str] = set()
    for name, value in environment().items():
        if not (is_engine_setting(name) and _SECRET_NAME.search(name.upper())):
            continue
        found.add(value)
        try:
            password = urlsplit(value).password
        except ValueError:
            password = None
        if password:
            found.add(password)
    return sorted((v for v in found if len(v) >= _MIN_SECRET), key=len, reverse=True)


def _cut(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 3] + "..."
