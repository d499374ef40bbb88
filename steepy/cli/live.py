"""The live view of `steepy run` on a terminal: chains by status, what runs now, what
waits to be retried, and the latest events. Piped output gets one line per event instead."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from steepy.cli.following import following
from steepy.cli.output import event_line
from steepy.events import EventKind
from steepy.model.submission import ProcessChainStatus as CS
from steepy.registry import Registry
from steepy.registry.records import utcnow

STATUSES = (CS.REGISTERED, CS.RUNNING, CS.PAUSED, CS.SUCCESS, CS.ERROR, CS.CANCELLED)  # columns
STYLES = {CS.RUNNING: "cyan", CS.PAUSED: "yellow", CS.SUCCESS: "green", CS.ERROR: "red",
          CS.CANCELLED: "magenta"}
REUSED_STYLE = "blue"  # chains that reused earlier work (extensions 15)
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
    reused: int = 0  # SUCCESS chains that reused earlier work (extensions 15)


@dataclass
class Timeline:
    """What the view keeps of the events read so far: the newest few, and the latest
    scheduled attempt retry of each chain that has not finished. Not the events themselves:
    a million chains make millions of them, and each redraw would walk them all."""

    last_id: int = 0
    recent: deque = field(default_factory=lambda: deque(maxlen=RECENT))
    retries: dict[str, dict] = field(default_factory=dict)  # chain id -> retryScheduled

    @classmethod
    def of(cls, events: list[dict]) -> "Timeline":
        timeline = cls()
        timeline.add(events)
        return timeline

    def add(self, events: list[dict]) -> None:
        for e in events:
            self.last_id = e["id"]
            self.recent.append(e)
            if e["kind"] == EventKind.CHAIN_RETRY_SCHEDULED and e.get("chainId"):
                self.retries[e["chainId"]] = e
            elif e["kind"] == EventKind.CHAIN_FINISHED:
                self.retries.pop(e.get("chainId"), None)


def take_snapshot(registry: Registry, submission_id: str, events: Timeline | list[dict],
                  counts: dict[str, int] | None = None) -> Snapshot:
    """`events': what the caller kept of the events read so far (or the whole timeline);
    `counts': the chains by status, when the caller counted them recently."""
    timeline = events if isinstance(events, Timeline) else Timeline.of(events)
    submission = registry.views.get_submission(submission_id)
    snap = Snapshot(str(submission.status) if submission else "?",
                    registry.views.chain_counts(submission_id) if counts is None else counts)
    if snap.counts.get(CS.REGISTERED):
        snap.blocked = registry.views.waiting_counts(submission_id)
    if snap.counts.get(CS.SUCCESS):
        snap.reused = registry.cache.reused(submission_id)
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
    for chain_id, e in timeline.retries.items():
        if chain_id not in still_running:
            continue
        at = datetime.fromisoformat(e["at"]) if e.get("at") else None
        snap.waiting.append((f"{e.get('executableId')} ({e.get('serviceId')})",
                             f"attempt {e.get('attempt')} of chain {chain_id}", at))
    snap.recent = [event_line(e) for e in timeline.recent]
    return snap


def render(snap: Snapshot) -> Group:
    counts = Table(show_edge=False, header_style="bold", title=f"submission: {snap.status}",
                   title_justify="left")
    for status in STATUSES:
        counts.add_column(status, justify="right", style=STYLES.get(status))
    cells = [str(snap.counts.get(s, 0)) for s in STATUSES]
    if snap.reused:  # of the SUCCESS ones
        counts.add_column("(reused)", justify="right", style=REUSED_STYLE)
        cells.append(str(snap.reused))
    counts.add_row(*cells)
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


@dataclass
class Counted:
    """The chains by status, counted again when the last count is old enough."""

    counts: dict[str, int] | None = None
    at: float = 0.0
    cost: float = 0.0

    def get(self, count: Callable[[], dict[str, int]], final: bool = False) -> dict[str, int]:
        now = time.monotonic()
        if self.counts is None or final or now - self.at >= 20 * self.cost:
            self.counts = count()
            self.at, self.cost = now, time.monotonic() - now
        return self.counts


async def live_view(registry: Registry, submission_id: str, console: Console,
                    stop: asyncio.Event, interval_s: float = 0.25) -> None:
    """Redraw the view until `stop' is set, then draw it a last time. Counting the chains
    reads each of them: it is done again only after 20 times as long as it took (a
    submission of a million chains is counted every few seconds, a small one every time)."""
    timeline = Timeline()
    counted = Counted()

    def refresh(final: bool) -> Snapshot:
        timeline.add(registry.views.events(submission_id, timeline.last_id))
        return take_snapshot(registry, submission_id, timeline, counted.get(
            lambda: registry.views.chain_counts(submission_id), final=final))

    with Live(console=console, auto_refresh=False, transient=False) as live:
        async def draw(final: bool) -> None:
            live.update(render(await asyncio.to_thread(refresh, final)), refresh=True)

        await following(f"view of submission {submission_id}", draw, stop, interval_s)
