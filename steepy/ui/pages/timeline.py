"""A submission's timeline (`/workflows/{id}/timeline`, the UI's alone): a Gantt chart of its
process chains, one row per chain, a bar per run (from its start to its end, or to now while it
runs) on the agent that ran it, each attempt of each executable inside the run and the pauses
between attempts and between runs. Server-rendered with percentages, so it needs no script;
the page's live region redraws it as the submission's events arrive.

What is known of a run that still runs comes from the submission's events (the attempts are
stored when the run ends): a failed attempt is a tick at the time it was reported, a scheduled
retry a pause until its due time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from steepy.events import EventKind, kinds
from steepy.model.durations import format_duration
from steepy.ui.render import not_found, parse_time, when
from steepy.ui.render import page as render
from steepy.ui.routing import page

MIN_SPAN_MS = 1000  # a chart shorter than this is drawn over one second
MAX_TICKS = 8
LIVE_KINDS = ",".join(kinds("chain", "submission"))
TICK_STEPS_MS = [100, 200, 250, 500] + [s * 1000 for s in (
    1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400,
    172800, 604800)]
RUNNING = "RUNNING"
PAUSED = "PAUSED"


@dataclass
class Span:
    """Something drawn between two times: `left` and `width` in percent of its container."""

    left: float
    width: float
    kind: str  # CSS modifier: an attempt outcome, `delay`, `wait`, `mark`
    title: str  # the tooltip (and the accessible name)


@dataclass
class RunBar:
    chain_id: str
    number: int
    status: str  # the run's status, RUNNING while it runs
    agent: str | None
    start: datetime
    end: datetime | None
    bar: Span
    parts: list[Span] = field(default_factory=list)  # attempts and pauses, in % of the bar
    attempts: int = 0  # attempts known (stored or reported)

    @property
    def running(self) -> bool:
        return self.end is None


@dataclass
class Row:
    chain_id: str
    label: str  # its executables' service ids
    status: str
    detail: str = ""  # its executables' ids
    runs: list[RunBar] = field(default_factory=list)
    waits: list[Span] = field(default_factory=list)  # a chain retry's pause between runs
    reused: Span | None = None  # it reused earlier work (extensions 15): when, and whose


@dataclass
class Tick:
    left: float
    label: str
    title: str


@dataclass
class Chart:
    start: datetime
    end: datetime
    rows: list[Row]
    ticks: list[Tick]
    running: bool  # something still runs: the bars grow until now

    @property
    def runs(self) -> list[RunBar]:
        return [r for row in self.rows for r in row.runs]

    @property
    def reused(self) -> int:
        return sum(row.reused is not None for row in self.rows)


class Scale:
    """Times to percentages between `start` and `end`."""

    def __init__(self, start: datetime, end: datetime, minimum_ms: int = MIN_SPAN_MS):
        self.start = start
        self.span_ms = max(minimum_ms, _ms(end - start))
        self.end = start + timedelta(milliseconds=self.span_ms)

    def at(self, t: datetime) -> float:
        return _pct(_ms(t - self.start), self.span_ms)

    def span(self, begin: datetime, finish: datetime, kind: str, title: str) -> Span:
        return Span(self.at(begin), _pct(max(0, _ms(finish - begin)), self.span_ms), kind, title)

    def ticks(self) -> list[Tick]:
        step = next((s for s in TICK_STEPS_MS if self.span_ms / s <= MAX_TICKS),
                    TICK_STEPS_MS[-1])
        return [Tick(_pct(ms, self.span_ms), "0s" if ms == 0 else "+" + format_duration(ms),
                     when(self.start + timedelta(milliseconds=ms)))
                for ms in range(0, self.span_ms + 1, step)]


def _ms(delta: timedelta) -> int:
    return int(delta.total_seconds() * 1000)


def _pct(part_ms: float, whole_ms: float) -> float:
    return round(min(100.0, max(0.0, 100.0 * part_ms / whole_ms)) if whole_ms > 0 else 0.0, 3)


def _time(value: Any) -> datetime | None:
    return parse_time(value)


def _took(begin: datetime, finish: datetime | None) -> str:
    if finish is None:
        return "running"
    return format_duration(max(0, _ms(finish - begin)))


def _attempt_title(a: dict, begin: datetime, finish: datetime | None) -> str:
    what = f"{a.get('serviceId')} ({a.get('executableId')}), attempt {a.get('attempt')}: " \
           f"{a.get('outcome')}"
    if a.get("fallbackFor"):
        what = f"fallback for {a['fallbackFor']}: {what}"
    if a.get("timeoutKind"):
        what += f" ({a['timeoutKind']} timeout)"
    elif a.get("exitCode") is not None and a.get("outcome") != "SUCCESS":
        what += f", exit code {a['exitCode']}"
    if a.get("signal") is not None:
        what += f", signal {a['signal']}"
    return f"{what}, {_took(begin, finish)}"


def _stored_parts(bar: RunBar, attempts: list[dict]) -> list[Span]:
    """The stored attempts of a finished run, and the pauses between them."""
    inner = Scale(bar.start, bar.end or bar.start, 1)
    parts: list[Span] = []
    previous: dict[str, tuple[dict, datetime]] = {}  # the last attempt of each executable
    for a in attempts:
        begin = _time(a.get("startTime")) or bar.start
        finish = _time(a.get("endTime")) or begin
        before = previous.get(a.get("executableId", ""))
        if before is not None and finish >= begin > before[1]:
            rule = before[0].get("delayRule") or ""
            parts.append(inner.span(before[1], begin, "delay",
                                    f"pause {_took(before[1], begin)} before attempt "
                                    f"{a.get('attempt')} of {a.get('serviceId')}"
                                    + (f" ({rule})" if rule else "")))
        kind = str(a.get("outcome") or "FAILED").lower()
        parts.append(inner.span(begin, finish, kind if begin < finish else "mark",
                                _attempt_title(a, begin, finish)))
        previous[a.get("executableId", "")] = (a, finish)
    return parts


def _reported_parts(bar: RunBar, events: list[dict], now: datetime) -> list[Span]:
    """What the events say of a run that still runs: failed attempts as ticks, scheduled
    retries as pauses until they are due."""
    inner = Scale(bar.start, now, 1)
    parts: list[Span] = []
    for e in events:
        at = _time(e.get("time"))
        if at is None or at < bar.start:
            continue
        if e["kind"] == EventKind.CHAIN_ATTEMPT_FAILED:
            bar.attempts += 1
            parts.append(Span(inner.at(at), 0, "mark",
                              f"{e.get('serviceId')} ({e.get('executableId')}), attempt "
                              f"{e.get('attempt')}: {e.get('outcome')}"
                              + (f", exit code {e['exitCode']}" if e.get("exitCode") is not None
                                 else "")))
        elif e["kind"] == EventKind.CHAIN_RETRY_SCHEDULED:
            due = _time(e.get("at")) or at
            parts.append(inner.span(at, min(due, now), "delay",
                                    f"pause {format_duration(int(e.get('delayMs') or 0))} "
                                    f"before attempt {e.get('attempt')} of {e.get('serviceId')}"
                                    + (f" ({e['rule']})" if e.get("rule") else "")))
    return parts


def build_chart(ctx: Any, submission: dict, now: datetime | None = None) -> Chart:
    """The chart of one submission, from its chains, runs, attempts and events."""
    now = now or datetime.now(timezone.utc)
    submission_id = submission["id"]
    records, _ = ctx.views.list_chains(submission_id)
    records = sorted(records, key=lambda r: r.seq)
    runs = ctx.views.submission_runs(submission_id)
    attempts: dict[tuple[str, int], list[dict]] = {}
    for chain_id, a in ctx.views.submission_attempts(submission_id):
        attempts.setdefault((chain_id, a["runNumber"]), []).append(a)
    open_runs = [r for r in runs if r.end_time is None]
    events = ctx.views.events(submission_id) if open_runs else []
    reused = ctx.views.reused_times(submission_id) if any(r.reused for r in records) else {}

    starts = [r.start_time for r in runs] + list(reused.values())
    if not starts:
        begin = _time(submission.get("startTime")) or now
        return Chart(begin, begin, [_row(r) for r in records], [], False)
    # a chain retry's pause is drawn until now (its due time is in its tooltip): a long
    # delay would squeeze everything else
    waiting = [min(r.auto_resume_after, now) for r in runs
               if r.auto_resume_after is not None and r.end_time is not None]
    ends = [r.end_time or now for r in runs] + waiting + list(reused.values())
    scale = Scale(min(starts), max(ends))
    by_chain: dict[str, list] = {}
    for r in runs:
        by_chain.setdefault(r.chain_id, []).append(r)

    rows = [_chain_row(record, by_chain.get(record.chain.id, []), attempts, events, reused,
                       scale, now) for record in records]
    rows.sort(key=lambda r: (r.runs[0].start if r.runs else reused.get(r.chain_id, scale.end)))
    paused = any(r.status == PAUSED for r in records)  # its pause grows until the next run
    return Chart(scale.start, scale.end, rows, scale.ticks(), bool(open_runs) or paused)


def _chain_row(record: Any, chain_runs: list, attempts: dict[tuple[str, int], list[dict]],
               events: list[dict], reused: dict[str, datetime], scale: Scale,
               now: datetime) -> Row:
    """One chain's row: where it was reused from, or a bar per run (its attempts from the
    stored records, or from the events while it runs) and the pause after a run that a
    chain retry waits out."""
    chain_id = record.chain.id
    row = _row(record)
    if record.reused and chain_id in reused:
        row.reused = _reused(scale, chain_id, record.reused, reused[chain_id])
    for i, run in enumerate(chain_runs):
        status = run.status or RUNNING
        title = (f"run {run.run_number} of {chain_id} on agent {run.agent_id or 'unknown'}: "
                 f"{status}, {_took(run.start_time, run.end_time)}")
        if run.error_message:
            title += f" ({run.error_message})"
        bar = RunBar(chain_id, run.run_number, status, run.agent_id, run.start_time,
                     run.end_time, scale.span(run.start_time, run.end_time or now,
                                              status.lower(), title))
        stored = attempts.get((chain_id, run.run_number), [])
        if run.end_time is not None:
            bar.parts = _stored_parts(bar, stored)
            bar.attempts = len(stored)
        else:
            mine = [e for e in events if e.get("chainId") == chain_id]
            bar.parts = _reported_parts(bar, mine, now)
        row.runs.append(bar)
        if run.auto_resume_after is not None and run.end_time is not None:
            following = chain_runs[i + 1].start_time if i + 1 < len(chain_runs) else None
            until = following or min(run.auto_resume_after, max(now, run.end_time))
            row.waits.append(scale.span(run.end_time, until, "wait",
                                        f"chain retry after run {run.run_number}: due "
                                        f"{when(run.auto_resume_after)}"))
    return row


def _reused(scale: Scale, chain_id: str, earlier: dict, at: datetime) -> Span:
    """The mark of a chain that reused earlier work (extensions 15), at the time it did."""
    return scale.span(at, at, "reused", f"{chain_id} reused the work of chain "
                      f"{earlier.get('processChainId')} (submission "
                      f"{earlier.get('submissionId')}) at {when(at)}")


def _row(record: Any) -> Row:
    """A chain's row, labelled with its services (and its executables' ids below)."""
    executables = record.chain.executables
    services = list(dict.fromkeys(e.service_id for e in executables))
    return Row(record.chain.id, " → ".join(services) or record.chain.id, str(record.status),
               ", ".join(e.id for e in executables))


def timeline(request: Request) -> Response:
    ctx = request.app.state.ctx
    submission_id = request.path_params["id"]
    submission = ctx.views.submission(submission_id, with_workflow=False)
    if submission is None:
        return not_found(request, f"There is no submission with ID `{submission_id}'.")
    chart = build_chart(ctx, submission)
    return render(request, "timeline.html", submission=submission, chart=chart,
                  live_kinds=LIVE_KINDS)


ROUTES = [page("/workflows/{id}/timeline", timeline, negotiated=False)]
