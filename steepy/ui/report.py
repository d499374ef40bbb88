"""A submission's report (`steepy report ID`): one HTML file that opens from disk, offline,
with nothing to fetch. Its summary, the UI's timeline chart, every attempt with its reason,
and the durations per service.

The chart is the UI's own: `build_chart` of the timeline page reads the submission's document
through a small adapter (`_DocumentViews`) instead of the registry, and the chart's markup is
the `main` block of the page's template, rendered here with its links turned into links
inside the report. The UI's stylesheets are read from the package and put inline."""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib.resources import files
from typing import Any

from markupsafe import Markup

from steepy import __version__
from steepy.events import EventKind
from steepy.ui.pages.timeline import Chart, build_chart
from steepy.ui.render import ENV, parse_time
from steepy.ui.report_facts import attempt_rows, describe, service_durations, summary

STYLESHEETS = ("steepy.css", "timeline.css")
LINK = "steepy-report:"  # the chart's base path while it is rendered, replaced afterwards
_LINKS = re.compile(r'href="' + LINK + r'(/[^"]*)"')


@dataclass(frozen=True)
class _Executable:
    id: str
    service_id: str


@dataclass(frozen=True)
class _Chain:
    id: str
    executables: list[_Executable]


@dataclass(frozen=True)
class _ChainRecord:
    seq: int
    chain: _Chain
    status: str
    reused: dict | None = None  # where its results came from (extensions 15)


@dataclass(frozen=True)
class _Run:
    chain_id: str
    run_number: int
    status: str | None
    agent_id: str | None
    start_time: datetime
    end_time: datetime | None
    error_message: str | None
    auto_resume_after: datetime | None


@dataclass
class _DocumentViews:
    """What `build_chart` reads of the registry (`ctx.views`), answered from a submission's
    document and events as the API gives them."""

    document: dict
    timeline: list[dict] = field(default_factory=list)

    def list_chains(self, _submission_id: str) -> tuple[list[_ChainRecord], int]:
        chains = self.document.get("processChains", [])
        return [_ChainRecord(i, _Chain(c["id"], [
            _Executable(e.get("id", ""), e.get("serviceId", "")) for e in c.get("executables", [])
        ]), str(c.get("status")), c.get("reused")) for i, c in enumerate(chains)], len(chains)

    def submission_runs(self, _submission_id: str) -> list[_Run]:
        found = []
        for c in self.document.get("processChains", []):
            for r in c.get("runs", []):
                start = parse_time(r.get("startTime"))
                if start is not None:
                    found.append(_Run(c["id"], int(r["runNumber"]), r.get("status"),
                                      r.get("agentId"), start, parse_time(r.get("endTime")),
                                      r.get("errorMessage"),
                                      parse_time(r.get("autoResumeAfter"))))
        return found

    def submission_attempts(self, _submission_id: str) -> list[tuple[str, dict]]:
        return [(c["id"], {"runNumber": r["runNumber"], **a})
                for c in self.document.get("processChains", [])
                for r in c.get("runs", []) for a in r.get("attempts", [])]

    def events(self, _submission_id: str) -> list[dict]:
        return self.timeline

    def reused_times(self, _submission_id: str) -> dict[str, datetime]:
        return {e["chainId"]: time for e in self.timeline if e.get("kind") == EventKind.CHAIN_REUSED
                and (time := parse_time(e.get("time"))) is not None}


@dataclass(frozen=True)
class _Context:
    views: _DocumentViews


def _link(match: re.Match) -> str:
    """A link of the chart into the report: a chain to its row in the chains table, anything
    else (the submission, an agent) to the summary."""
    path = match.group(1)
    if path.startswith("/processchains/"):
        return f'href="#chain-{path.removeprefix("/processchains/")}"'
    return 'href="#summary"'


def chart_html(document: dict, chart: Chart) -> Markup:
    """The UI timeline page's chart and runs table (its template's `main` block) without its
    heading, for the report."""
    template = ENV.get_template("timeline.html")
    context = template.new_context({"submission": document, "chart": chart, "base": LINK,
                                    "live_kinds": ""})
    html = "".join(template.blocks["main"](context))
    html = re.sub(r"<h1>.*?</h1>", "", html, count=1, flags=re.S)
    html = html.replace("<h2>", "<h3>").replace("</h2>", "</h3>")
    return Markup(_LINKS.sub(_link, html))


def _inline(name: str) -> str:
    return (files("steepy.ui") / "static" / name).read_text(encoding="utf-8")


def _icon() -> str:
    svg = (files("steepy.ui") / "static" / "favicon.svg").read_bytes()
    return "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")


def report_html(document: dict, events: list[dict], now: datetime | None = None) -> str:
    """The report of a submission: `document` as GET /workflows/ID/document answers (its
    chains with their runs and attempts), `events` its timeline (GET /workflows/ID/events)."""
    now = now or datetime.now(timezone.utc)
    rows = attempt_rows(document)
    chart = build_chart(_Context(_DocumentViews(document, events)), document, now)
    values: dict[str, Any] = {
        "submission": document, "summary": summary(document, events, rows),
        "rows": rows, "chart": chart_html(document, chart),
        "services": service_durations(rows), "now": now, "version": __version__,
        "style": Markup("\n".join(_inline(name) for name in STYLESHEETS)), "icon": _icon(),
        "chains": document.get("processChains", []), "describe": describe}
    return ENV.get_template("report.html").render(**values)
