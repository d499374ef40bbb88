"""The live view of `steepy run` on a terminal: chains by status, what runs now, what
waits to be retried, and the latest events. Piped output gets one line per event instead."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import datetime

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from steepy.cli.output import event_line
from steepy.events import EventKind
from steepy.model.submission import ProcessChainStatus as CS
from steepy.registry import Registry
from steepy.registry.records import utcnow
from steepy.model.clock import wait_event

STATUSES = (CS.REGISTERED, CS.RUNNING, CS.PAUSED, CS.SUCCESS, CS.ERROR, CS.CANCELLED)  # columns
STYLES = {CS.RUNNING: "cyan", CS.PAUSED: "yellow", CS.SUCCESS: "green", CS.ERROR: "red",
          CS.CANCELLED: "magenta"}
RECENT = 6  # event lines shown under the tables


@dataclass
class Snapshot:
    """What the view shows, read from the registry in one go."""

    status: str
    counts: dict[str, int]
    running: list[tuple[str, str, str]] = field(default_factory=list)  # chain, services, agent
    waiting: list[tuple[str, str, datetime | None]] = field(default_factory=list)  # what, why, when
    blocked: dict[str, int] = field(default_factory=dict)  # why chains cannot start -> how many
    recent: list[str] = field(default_factory=list)


def take_snapshot(registry: Registry, submission_id: str, events: list[dict]) -> Snapshot:
    """`events' is the whole timeline read so far (the caller keeps it between calls)."""
    submission = registry.views.get_submission(submission_id)
    snap = Snapshot(str(submission.status) if submission else "?",
                    registry.views.chain_counts(submission_id))
    if snap.counts.get(CS.REGISTERED):
        snap.blocked = registry.views.waiting_counts(submission_id)
    running, _ = registry.views.list_chains(submission_id, status=CS.RUNNING)
    for record in reversed(running):
        runs = registry.views.runs(record.chain.id)
        services = " → ".join(e.service_id for e in record.chain.executables)
        snap.running.append((record.chain.id, services, runs[-1].agent_id if runs else ""))
    paused, _ = registry.views.list_chains(submission_id, status=CS.PAUSED)
    for record in reversed(paused):
        snap.waiting.append((f"chain {record.chain.id}", "process chain retry",
                             record.next_run_at))
    # attempt retries: the latest retryScheduled of a chain that is still running
    still_running = {chain_id for chain_id, _, _ in snap.running}
    latest: dict[str, dict] = {}
    for e in events:
        if e["kind"] == EventKind.CHAIN_RETRY_SCHEDULED and e.get("chainId") in still_running:
            latest[e["chainId"]] = e
        elif e["kind"] == EventKind.CHAIN_FINISHED:
            latest.pop(e.get("chainId"), None)
    for chain_id, e in latest.items():
        at = datetime.fromisoformat(e["at"]) if e.get("at") else None
        snap.waiting.append((f"{e.get('executableId')} ({e.get('serviceId')})",
                             f"attempt {e.get('attempt')} of chain {chain_id}", at))
    snap.recent = [event_line(e) for e in events[-RECENT:]]
    return snap


def render(snap: Snapshot) -> Group:
    counts = Table(show_edge=False, header_style="bold", title=f"submission: {snap.status}",
                   title_justify="left")
    for status in STATUSES:
        counts.add_column(status, justify="right", style=STYLES.get(status))
    counts.add_row(*(str(snap.counts.get(s, 0)) for s in STATUSES))
    parts: list = [counts]
    for reason, count in sorted(snap.blocked.items()):
        parts.append(Text(f"{count} process chain{'s' if count != 1 else ''} {reason}",
                          style="bold red"))
    if snap.running:
        table = Table("running chain", "executables", "agent", show_edge=False,
                      header_style="bold cyan")
        for row in snap.running:
            table.add_row(*row)
        parts.append(table)
    if snap.waiting:
        table = Table("retry pending", "what", "due in", show_edge=False,
                      header_style="bold yellow")
        now = utcnow()
        for what, why, when in snap.waiting:
            due = f"{max(0.0, (when - now).total_seconds()):.1f} s" if when else ""
            table.add_row(what, why, due)
        parts.append(table)
    parts += [Text(line, style="dim", no_wrap=True, overflow="ellipsis") for line in snap.recent]
    return Group(*parts)


async def live_view(registry: Registry, submission_id: str, console: Console,
                    stop: asyncio.Event, interval_s: float = 0.25) -> None:
    """Redraw the view until `stop' is set, then draw it a last time."""
    events: list[dict] = []

    def refresh() -> Snapshot:
        events.extend(registry.views.events(submission_id, events[-1]["id"] if events else 0))
        return take_snapshot(registry, submission_id, events)

    with Live(console=console, auto_refresh=False, transient=False) as live:
        while True:
            live.update(render(await asyncio.to_thread(refresh)), refresh=True)
            if stop.is_set():
                break
            await wait_event(stop, interval_s)
