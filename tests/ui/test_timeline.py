"""A submission's timeline: a bar per run on its agent, the attempts and retry pauses inside,
a chain retry's wait between runs, an axis; live while it runs (failed attempts reported by
events before the run ends); the empty and missing cases; phone width."""

from __future__ import annotations

import re
import warnings

from tests.ui.conftest import PHONE
from tests.ui.test_site import HTML

# two chains: `retried' fails once and its executable is retried in the same run; `rerun'
# fails once with no executable retries, so the chain is retried in a second run
RETRIED = """
api: 4.7.0
name: timeline of retries
retries:
  processChains: {maxAttempts: 2, delay: 300ms}
actions:
  - id: retried
    type: execute
    service: flaky
    inputs: [{id: fail_times, value: 1}]
    outputs: [{id: output_file, var: a}]
  - id: rerun
    type: execute
    service: flaky
    inputs: [{id: fail_times, value: 1}]
    outputs: [{id: output_file, var: b}]
    retries: {maxAttempts: 1}
"""

RUN = re.compile(r'<div class="tl-run k-(\w+)" style="left: ([\d.]+)%; width: ([\d.]+)%" '
                 r'title="([^"]*)" data-run="(\d+)" data-agent="([^"]*)" data-attempts="(\d+)"')
PART = re.compile(r'<span class="tl-part k-(\w+)"')


def _rows(html: str) -> dict[str, str]:
    """The chart's rows by the executable ids under their label."""
    chunks = html.split('<div class="tl-row" data-chain="')[1:]
    return {re.search(r'<span class="muted">([^<]*)</span>', c).group(1): c for c in chunks}


def test_timeline_shows_runs_attempts_agents_and_axis(ui) -> None:
    submission = ui.submit(RETRIED)
    assert ui.wait(submission)["status"] == "SUCCESS"
    response = ui.http.get(f"/workflows/{submission}/timeline")  # the UI's path: any Accept
    assert response.status_code == 200
    html = response.text
    agents = {a["id"] for a in ui.http.get("/agents").json()}

    rows = _rows(html)
    assert set(rows) == {"retried", "rerun"}
    assert all(">flaky</a>" in row for row in rows.values())

    (status, left, width, title, number, agent, attempts), = RUN.findall(rows["retried"])
    assert (status, number, attempts) == ("success", "1", "2") and agent in agents
    assert title.startswith("run 1 of ") and f"on agent {agent}: SUCCESS" in title
    assert float(left) < 5 and 0 < float(width) <= 100
    assert PART.findall(rows["retried"]) == ["failed", "delay", "success"]
    assert "attempt 1: FAILED, exit code 1" in rows["retried"]
    # how long the pause took depends on the machine's load: only that it is said
    assert re.search(r"pause \d+(ms|s)[^<]* before attempt 2 of flaky \(exponential",
                     rows["retried"])
    assert f'<span class="tl-agent">{agent}</span>' in rows["retried"]

    runs = RUN.findall(rows["rerun"])
    assert [(r[0], r[4], r[6]) for r in runs] == [("error", "1", "1"), ("success", "2", "1")]
    assert all(r[5] in agents for r in runs)
    first_end = float(runs[0][1]) + float(runs[0][2])
    assert float(runs[1][1]) > first_end  # the second run starts after the pause
    assert PART.findall(rows["rerun"]) == ["failed", "success"]
    assert re.search(r'class="tl-wait"[^>]*title="chain retry after run 1: due ', rows["rerun"])

    axis = re.search(r'data-testid="axis">(.*?)</div>\s*</div>', html, re.S).group(1)
    ticks = re.findall(r'class="tl-tick" style="left: ([\d.]+)%"[^>]*>([^<]+)<', axis)
    assert ticks[0] == ("0.0", "0s") and len(ticks) >= 3
    assert all(re.fullmatch(r"\+\d.*(ms|s)", label) for _, label in ticks[1:])
    assert 'class="tl-legend"' in html and "pause before a retry" in html
    assert len(re.findall(r'<td class="num">\d+</td>\s*</tr>', html)) == 3  # the runs table


def test_timeline_of_a_missing_or_unstarted_submission(ui, tmp_path) -> None:
    missing = ui.http.get("/workflows/nope/timeline", headers={"accept": "application/json"})
    assert missing.status_code == 404 and "no submission with ID `nope&#39;" in missing.text

    from steepy.http import ApiContext, create_app
    from steepy.registry import open_registry

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    # a server that runs no engine: the submission waits, no chain starts
    ctx = ApiContext(open_registry(f"sqlite:///{tmp_path / 'steepy.db'}"))
    with TestClient(create_app(ctx)) as app:
        created = app.post("/workflows", content="api: 4.7.0\nactions: []\n")
        assert created.status_code == 202
        html = app.get(f"/workflows/{created.json()['id']}/timeline", headers=HTML).text
        assert 'data-testid="timeline-empty"' in html
        assert "No process chain of this submission has started yet" in html
        assert "tl-run" not in html and 'data-live-region' in html


SLOW_RETRY = """
api: 4.7.0
name: a pause to watch
actions:
  - id: later
    type: execute
    service: flaky
    inputs: [{id: fail_times, value: 1}]
    outputs: [{id: output_file, var: a}]
    retries: {maxAttempts: 2, delay: 3s}
  - {id: nap, type: execute, service: sleep, inputs: [{id: seconds, value: 1}]}
"""


def test_timeline_is_live_and_scrolls_in_its_box_on_a_phone(ui, chromium) -> None:
    from playwright.sync_api import expect

    context = chromium.new_context(viewport=PHONE)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        submission = ui.submit(SLOW_RETRY)
        page.goto(f"{ui.url}/workflows/{submission}/timeline")
        # while the run still runs: its failed attempt is a tick and the pause grows, from the
        # submission's events, without reload
        running = page.locator(".tl-run[data-running]")
        expect(running.locator(".tl-part.k-mark")).to_have_count(1)
        expect(running.locator(".tl-part.k-delay")).to_have_count(1)
        expect(running.locator(".tl-part.k-mark")).to_have_attribute(
            "title", re.compile(r"flaky \(later\), attempt 1: FAILED, exit code 1"))
        expect(page.get_by_test_id("submission-status")).to_have_text("SUCCESS")
        expect(page.locator(".tl-run")).to_have_count(2)
        expect(page.locator(".tl-run[data-running]")).to_have_count(0)
        expect(page.locator(".tl-run.k-success .tl-part.k-delay")).to_have_count(1)

        widths = page.evaluate("""() => {
            const box = document.querySelector('.tl-box');
            return {page: document.documentElement.scrollWidth, view: window.innerWidth,
                    box: box.clientWidth, chart: box.scrollWidth};
        }""")
        assert widths["page"] <= widths["view"], widths  # the page does not scroll sideways
        assert widths["chart"] > widths["box"], widths  # the chart does, inside its box
        page.locator(".tl-box").evaluate("box => box.scrollLeft = box.scrollWidth")
        expect(page.locator(".tl-row[data-chain] .tl-label").first).to_be_in_viewport()
    finally:
        context.close()
    assert not errors, errors
