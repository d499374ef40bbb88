"""What a failed attempt says: the service, the command and how it ended, then the tool's
last output lines (the brief: errors from running tools name the service, the exit code or
the timeout, and the last lines of output)."""

from __future__ import annotations

import shlex
import signal as signals

from steepy.agent.process import RunResult
from steepy.model.timeouts import TimeoutKind
from steepy.model.processchain import Executable

MAX_COMMAND_CHARS = 300


def failure_message(exe: Executable, argv: list[str], result: RunResult,
                    explained: str | None = None) -> str:
    """Names the service, the command and how it ended (with what its runtime `explained`),
    then the tool's last output lines."""
    head = f"Execution of service `{exe.service_id}' failed"
    if result.spawn_error is not None:
        return f"{head}: {result.spawn_error}"
    command = shlex.join(argv)
    if len(command) > MAX_COMMAND_CHARS:
        command = command[:MAX_COMMAND_CHARS] + "..."
    if result.signal is not None:
        try:
            name = signals.Signals(result.signal).name
        except ValueError:
            name = "unknown signal"
        how = f"was killed by signal {result.signal} ({name})"
    else:
        how = f"exited with code {result.exit_code}"
    if explained:
        how += f" ({explained})"
    if not result.last_lines:
        return f"{head}: `{command}' {how} without output."
    return f"{head}: `{command}' {how}" + last_output(result.last_lines)


def timeout_message(exe: Executable, kind: TimeoutKind, lines: list[str] | None) -> str:
    """Names the service, the timeout that fired and its limit, then the tool's last output
    lines (Steep's message without them: `Execution of service `s' timed out after 700 ms
    (maximum runtime)')."""
    return (f"Execution of service `{exe.service_id}' timed out after "
            f"{kind.policy(exe).timeout} ms ({kind.words})" + last_output(lines))


def last_output(lines: list[str] | None) -> str:
    """The end of a failure's message: the tool's last output lines, if it printed any."""
    return ". Last output:\n" + "\n".join(lines) if lines else ""
