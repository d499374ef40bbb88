"""A submission's timeline (GET /workflows/{id}/events) as lines people read: what happened,
to which process chain, why (exit code, timeout, signal, message) and what comes next (a retry
due at a time, a paused chain resuming). The event kinds and their data are those of the
catalogue (steepy/events/); a kind it does not have (one a newer steepy wrote) is shown with its
fields, so nothing on the timeline is hidden."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from steepy.events import EventKind
from steepy.model.durations import format_duration

K = EventKind
HIDDEN = {K.CHAIN_PROGRESS}  # stored every few seconds while a chain runs: noise here
LIMIT = 500  # lines shown; the whole timeline is in the API
BAD = {"ERROR", "CANCELLED", "PARTIAL_SUCCESS"}
Made = tuple[str, str, "str | None"]  # a line's text, tone and detail


@dataclass
class Line:
    id: int
    time: str  # ISO 8601, UTC
    kind: str
    text: str
    chain: str | None = None
    tone: str = ""  # a status class: status-error, status-success, ... or ""
    detail: str | None = None  # a message of several lines, shown as preformatted text
    due: str | None = None  # ISO time of what comes next, shown relative ("in 3 s")
    due_label: str = ""
    count: int = 1  # events folded into this line (chains registered or reused together)


def _status_tone(status: Any) -> str:
    return "status-" + str(status or "").lower().replace("_", "-") if status else ""


def _plural(n: Any, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _why(e: dict) -> str:
    """Why an attempt failed, in a few words."""
    if e.get("timeoutKind"):
        return f"{e['timeoutKind']} timeout"
    if e.get("signal") is not None:
        return f"killed by signal {e['signal']}"
    if e.get("exitCode") is not None:
        return f"exit code {e['exitCode']}"
    return str(e.get("outcome") or "failed").lower()


def _attempt_failed(e: dict) -> tuple[str, str, str | None]:
    service = e.get("serviceId") or "?"
    exe = f" ({e['executableId']})" if e.get("executableId") else ""
    return (f"Attempt {e.get('attempt', '?')} of service {service}{exe} failed: {_why(e)}",
            "status-error", e.get("message"))


def _retry(e: dict) -> tuple[str, str, str | None]:
    delay = e.get("delayMs")
    after = f" after {format_duration(int(delay))}" if isinstance(delay, int) else ""
    text = f"Retry scheduled: attempt {e.get('attempt', '?')} of service {e.get('serviceId', '?')}{after}"
    # the rule names the delay and ends with the reason the failure may be retried
    return text, "status-waiting", e.get("rule") or e.get("reason")


def _submission_status(e: dict) -> tuple[str, str, str | None]:
    status = e.get("status")
    text = {"ACCEPTED": "Submitted (ACCEPTED)", "RUNNING": "Running"}.get(
        status, f"Finished: {status}")
    return text, _status_tone(status), e.get("errorMessage")


def _chain_finished(e: dict) -> tuple[str, str, str | None]:
    status = e.get("status")
    text = f"Run {e.get('run', '?')} ended: {status}"
    if status == "PAUSED":
        text = f"Run {e.get('run', '?')} failed; the process chain is paused before its next run"
    return text, _status_tone(status), e.get("errorMessage")


def _generic(e: dict) -> tuple[str, str, str | None]:
    fields = ", ".join(f"{k}: {v}" for k, v in e.items()
                       if k not in ("id", "time", "kind", "chainId", "submissionId")
                       and v is not None)
    word = e["kind"].split(".")[-1]
    tone = "status-waiting" if "requeue" in word.lower() else ""
    return word + (f" ({fields})" if fields else ""), tone, None


def _requeued(e: dict) -> tuple[str, str, str | None]:
    delay = e.get("delayMs")
    after = f" after {format_duration(int(delay))}" if isinstance(delay, int) else ""
    return (f"Attempt {e.get('attempt', '?')} of service {e.get('serviceId', '?')} re-queued"
            f"{after} (not counted)", "status-waiting", e.get("reason"))


def _fallback(e: dict) -> tuple[str, str, str | None]:
    code = e.get("exitCode")
    how = f" (exit code {code})" if code is not None else ""
    return (f"Service {e.get('serviceId', '?')} failed after all its attempts{how}: its fallback "
            f"{e.get('fallbackServiceId', '?')} runs instead", "status-waiting", e.get("message"))


def _priority(e: dict) -> Made:
    return f"Priority changed to {e.get('priority')}", "", None


# the words for each kind of the catalogue (tests/events/test_events.py checks that none lacks them)
DESCRIBE: dict[str, Callable[[dict], Made]] = {
    K.CHAIN_ATTEMPT_FAILED: _attempt_failed, K.CHAIN_RETRY_SCHEDULED: _retry,
    K.CHAIN_ATTEMPT_REQUEUED: _requeued, K.CHAIN_FALLBACK_STARTED: _fallback,
    K.SUBMISSION_STATUS: _submission_status, K.CHAIN_FINISHED: _chain_finished,
    K.SUBMISSION_PRIORITY: _priority, K.CHAIN_PRIORITY: _priority,
    K.SUBMISSION_RETRIED: lambda e: (
        f"Retried (was {e.get('previous')}): failed and cancelled chains run again",
        "status-running", None),
    K.SUBMISSION_SKIPPED: lambda e: (
        f"Action {e.get('actionId', '?')} skipped: {e.get('reason', '?')}", "", None),
    K.SUBMISSION_RESUMED: lambda e: (
        f"Taken over by engine {e.get('owner')} (its engine was lost)", "", None),
    K.SUBMISSION_CANCEL_REQUESTED: lambda e: (
        f"Cancel requested: {_plural(e.get('cancelled', 0), 'waiting process chain')} "
        "cancelled, running ones stopped", "status-cancelled", None),
    K.CHAIN_REGISTERED: lambda e: (
        f"Process chain registered ({_plural(e.get('executables', 0), 'executable')})", "", None),
    K.CHAIN_STARTED: lambda e: (
        f"Run {e.get('run', '?')} started on agent {e.get('agent')}", "status-running", None),
    K.CHAIN_REQUEUED: lambda e: (
        f"Run {e.get('run', '?')} requeued ({e.get('reason')}); now {e.get('status')}",
        "status-waiting", None),
    K.CHAIN_RESUMED: lambda e: (
        "Resumed after its pause: waits for an agent again", "status-registered", None),
    K.CHAIN_REUSED: lambda e: (
        f"Reused the work of process chain {e.get('fromChainId')} of submission "
        f"{e.get('fromSubmissionId')}", "status-reused", None),
    K.CHAIN_AGENT_LOST: lambda e: (
        f"Agent {e.get('agent')} lost during run {e.get('run', '?')}", "status-error", None),
    K.CHAIN_WAITING: lambda e: (
        f"{_plural(e.get('chains', 0), 'process chain')} {e.get('reason')}", "status-waiting",
        None),
    K.CHAIN_CANCEL_REQUESTED: lambda e: (
        f"Cancel requested (was {e.get('previous')})", "status-cancelled", None),
    K.CHAIN_PROGRESS: lambda e: (f"Progress {round(100 * (e.get('progress') or 0))}%", "", None),
    K.SCHEDULE_FIRED: lambda e: (
        f"Submitted by schedule {e.get('name') or e.get('schedule')} (due {e.get('dueTime')})",
        "", None),
    K.SCHEDULE_SKIPPED: lambda e: (
        f"Schedule {e.get('schedule')} skipped {_plural(e.get('count', 0), 'due time')}",
        "status-waiting", None),
    K.AGENT_ARRIVED: lambda e: (f"Agent {e.get('agent')} arrived", "", None),
    K.AGENT_LEFT: lambda e: (f"Agent {e.get('agent')} left ({e.get('reason')})", "", None),
}


def describe(e: dict) -> Line:
    """One event as a line."""
    kind = e.get("kind", "")
    made = DESCRIBE[kind](e) if kind in DESCRIBE else _generic(e)  # a kind of another version
    text, tone, detail = made
    line = Line(id=int(e.get("id", 0)), time=str(e.get("time") or ""), kind=kind, text=text,
                chain=e.get("chainId"), tone=tone, detail=detail)
    if kind == K.CHAIN_RETRY_SCHEDULED and e.get("at"):
        line.due, line.due_label = str(e["at"]), "due"
    elif kind == K.CHAIN_FINISHED and e.get("resumeAt"):
        line.due, line.due_label = str(e["resumeAt"]), "resumes"
    return line


def timeline(events: list[dict], limit: int = LIMIT) -> tuple[list[Line], int]:
    """The lines of a timeline, oldest first: chains registered in one go fold into one line,
    and so do chains that reused the work of one submission in one go (a rerun of 10,000
    chains is two lines, not 20,000); at most `limit` lines (the newest). Also the number of
    lines left out."""
    lines: list[Line] = []
    folds: list[tuple | None] = []  # what each line folds
    for e in events:
        if e.get("kind") in HIDDEN:
            continue
        fold = _fold(e)
        last = lines[-1] if lines else None
        if (fold is not None and last is not None and folds[-1] == fold
                and last.time[:19] == str(e.get("time"))[:19]):
            last.count += 1
            last.chain = None
            last.text = FOLDED[fold[0]](last.count, e)
            continue
        lines.append(describe(e))
        folds.append(fold)
    left_out = max(0, len(lines) - limit)
    return lines[left_out:], left_out


# the line of events folded together, by kind
FOLDED: dict[str, Callable[[int, dict], str]] = {
    K.CHAIN_REGISTERED: lambda n, e: f"{n} process chains registered",
    K.CHAIN_REUSED: lambda n, e: (
        f"{n} process chains reused the work of submission {e.get('fromSubmissionId')}"),
}


def _fold(e: dict) -> tuple | None:
    """What events must share to fold into one line (with their second), None for one that
    never folds."""
    kind = e.get("kind")
    if kind == K.CHAIN_REUSED:
        return (kind, e.get("fromSubmissionId"))
    return (kind,) if kind in FOLDED else None
