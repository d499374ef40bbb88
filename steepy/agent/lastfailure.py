"""What a tool is told about the failure before it, in one home:

* every attempt after a failed one (extensions 3): `STEEPY_LAST_FAILED_AT' (when it ended,
  ISO 8601 in UTC) and `STEEPY_LAST_MESSAGE' (its error message); both are empty on a first
  attempt;
* a fallback or the workflow's catch (extensions 10): `STEEPY_FAILED_ACTION',
  `STEEPY_FAILED_SERVICE', `STEEPY_FAILED_EXIT_CODE' and `STEEPY_FAILED_MESSAGE'.

The last message is made from the attempt's record, so a run that goes on from cut runs tells
the same as the run that saw the failure. Both messages are made by `told': they never hold the
command line (a runtime's command may carry settings such as `-e NAME=value'), they are one
line of at most `MAX_CHARS' characters without control characters (a NUL byte in a tool's
output would make the next environment impossible), and where they would hold the value of a
secret the engine keeps to itself (steepy.agent.secrets: `STEEPY_HTTP_TOKEN', the password in
`STEEPY_DB_URL', ...) that value is replaced by `***'.
"""

from __future__ import annotations

import re
from datetime import timezone

from steepy.agent.secrets import engine_secrets, redacted
from steepy.model.attempt import AttemptRecord
from steepy.model.processchain import Executable

__all__ = ["FAILED_ACTION", "FAILED_EXIT_CODE", "FAILED_MESSAGE", "FAILED_SERVICE",
           "LAST_FAILED_AT", "LAST_MESSAGE", "MAX_CHARS", "failed_env", "last_failure_env",
           "one_line", "told"]

LAST_FAILED_AT = "STEEPY_LAST_FAILED_AT"
LAST_MESSAGE = "STEEPY_LAST_MESSAGE"
FAILED_ACTION = "STEEPY_FAILED_ACTION"
FAILED_SERVICE = "STEEPY_FAILED_SERVICE"
FAILED_EXIT_CODE = "STEEPY_FAILED_EXIT_CODE"
FAILED_MESSAGE = "STEEPY_FAILED_MESSAGE"
MAX_CHARS = 1000

# failure_message's "`COMMAND' exited with code 3": the command goes (greedy: the last quote)
_COMMAND = re.compile(r"( failed: )`.*' ((?:exited with code|was killed by signal) )")
_LAST_OUTPUT = ". Last output:"
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # C0, DEL and C1: each becomes a space


def last_failure_env(record: AttemptRecord | None) -> dict[str, str]:
    """The two variables for the attempt after `record' (None: there was no failure)."""
    if record is None:
        return {LAST_FAILED_AT: "", LAST_MESSAGE: ""}
    ended = record.end_time or record.start_time
    if ended.tzinfo is None:
        ended = ended.replace(tzinfo=timezone.utc)
    at = ended.astimezone(timezone.utc).isoformat(timespec="milliseconds")
    return {LAST_FAILED_AT: at.replace("+00:00", "Z"), LAST_MESSAGE: one_line(record)}


def failed_env(exe: Executable, failed: AttemptRecord | None, message: str) -> dict[str, str]:
    """The variables of the fallback (or catch) that stands in for `exe', which ended with
    `message'; `failed' is its last failed attempt (its exit code and output), if any."""
    return {FAILED_ACTION: exe.id, FAILED_SERVICE: exe.service_id,
            FAILED_EXIT_CODE: "" if failed is None or failed.exit_code is None
            else str(failed.exit_code),
            FAILED_MESSAGE: told(message, [] if failed is None else failed.last_lines)}


def one_line(record: AttemptRecord) -> str:
    """What the attempt after `record' is told of it."""
    return told(record.message or f"attempt {record.attempt} ended {record.outcome}",
                record.last_lines)


def told(message: str, last_lines: list[str]) -> str:
    """The first line of a failure's `message' without the command, the last non-blank line
    of output appended; one line without control characters, redacted, cut."""
    head, _, _ = message.partition("\n")
    head = _COMMAND.sub(r"\1\2", head, count=1)
    if head.endswith(_LAST_OUTPUT):
        head = head[: -len(_LAST_OUTPUT)]
    last = next((line for line in reversed(last_lines) if _CONTROL.sub(" ", line).strip()), None)
    if last is not None:
        head += f"; last output: {last}"
    return _cut(redacted(" ".join(_CONTROL.sub(" ", head).split()), engine_secrets()))


def _cut(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 3] + "..."
