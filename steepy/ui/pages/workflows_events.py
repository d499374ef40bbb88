"""A submission's timeline (GET /workflows/{id}/events) as lines people read: what happened,
to which process chain, why (exit code, timeout, signal, message) and what comes next (a retry
due at a time, a paused chain resuming). The event kinds and their data are those the registry
(steepy/registry/*.py) and the scheduler (agents' reports) store; a kind this module does not
know is shown with its fields, so nothing on the timeline is hidden."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from steepy.model.durations import format_duration

HIDDEN = {"chain.progress"}  # stored every few seconds while a chain runs: noise here
LIMIT = 500  # lines shown; the whole timeline is in the API
BAD = {"ERROR", "CANCELLED", "PARTIAL_SUCCESS"}


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
    count: int = 1  # events folded into this line (chains registered together)


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


def _simple(e: dict) -> tuple[str, str, str | None] | None:
    kind = e["kind"]
    if kind == "submission.retried":
        return f"Retried (was {e.get('previous')}): failed and cancelled chains run again", \
            "status-running", None
    if kind == "submission.resumed":
        return f"Taken over by engine {e.get('owner')} (its engine was lost)", "", None
    if kind == "submission.cancelRequested":
        return (f"Cancel requested: {_plural(e.get('cancelled', 0), 'waiting process chain')} "
                "cancelled, running ones stopped", "status-cancelled", None)
    if kind in ("submission.priority", "chain.priority"):
        return f"Priority changed to {e.get('priority')}", "", None
    if kind == "chain.registered":
        return (f"Process chain registered ({_plural(e.get('executables', 0), 'executable')})",
                "", None)
    if kind == "chain.started":
        return f"Run {e.get('run', '?')} started on agent {e.get('agent')}", "status-running", None
    if kind == "chain.requeued":
        return (f"Run {e.get('run', '?')} requeued ({e.get('reason')}); now {e.get('status')}",
                "status-waiting", None)
    if kind == "chain.resumed":
        return "Resumed after its pause: waits for an agent again", "status-registered", None
    if kind == "chain.agentLost":
        return (f"Agent {e.get('agent')} lost during run {e.get('run', '?')}", "status-error",
                None)
    if kind == "chain.waiting":
        return (f"{_plural(e.get('chains', 0), 'process chain')} {e.get('reason')}",
                "status-waiting", None)
    if kind == "chain.cancelRequested":
        return f"Cancel requested (was {e.get('previous')})", "status-cancelled", None
    return None


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


DESCRIBE = {"chain.attemptFailed": _attempt_failed, "chain.retryScheduled": _retry,
            "chain.attemptRequeued": _requeued, "chain.fallbackStarted": _fallback,
            "submission.status": _submission_status, "chain.finished": _chain_finished}


def describe(e: dict) -> Line:
    """One event as a line."""
    kind = e.get("kind", "")
    made = DESCRIBE[kind](e) if kind in DESCRIBE else (_simple(e) or _generic(e))
    text, tone, detail = made
    line = Line(id=int(e.get("id", 0)), time=str(e.get("time") or ""), kind=kind, text=text,
                chain=e.get("chainId"), tone=tone, detail=detail)
    if kind == "chain.retryScheduled" and e.get("at"):
        line.due, line.due_label = str(e["at"]), "due"
    elif kind == "chain.finished" and e.get("resumeAt"):
        line.due, line.due_label = str(e["resumeAt"]), "resumes"
    return line


def timeline(events: list[dict], limit: int = LIMIT) -> tuple[list[Line], int]:
    """The lines of a timeline, oldest first: chains registered in one go fold into one line;
    at most `limit` lines (the newest). Also the number of lines left out."""
    lines: list[Line] = []
    for e in events:
        if e.get("kind") in HIDDEN:
            continue
        last = lines[-1] if lines else None
        if (e.get("kind") == "chain.registered" and last is not None
                and last.kind == "chain.registered" and last.time[:19] == str(e.get("time"))[:19]):
            last.count += 1
            last.chain = None
            last.text = f"{last.count} process chains registered"
            continue
        lines.append(describe(e))
    left_out = max(0, len(lines) - limit)
    return lines[left_out:], left_out
