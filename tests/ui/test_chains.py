"""The process-chain pages: the list (status and workflow filters, paging), one chain (command
lines, policies, runs, attempts: exit code, the timeout that fired, the delay before the next
attempt and its rule), cancel and priority from the page, phone width."""

from __future__ import annotations

import html
import re
import time

from tests.ui.conftest import PHONE

HTML = {"accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
THREE = """api: 4.7.0
actions:
  - {type: execute, service: sleep, inputs: [{id: seconds, value: 0}]}
  - {type: execute, service: sleep, inputs: [{id: seconds, value: 0}]}
  - {type: execute, service: sleep, inputs: [{id: seconds, value: 0}]}
"""
FLAKY = """api: 4.7.0
vars: [{id: out}]
actions:
  - type: execute
    service: flaky
    inputs: [{id: fail_times, value: 1}, {id: exit_code, value: 3}]
    outputs: [{id: output_file, var: out}]
    retries: {maxAttempts: 2, delay: 150ms, retryOn: {exitCodes: [3]}}
"""
# maxInactivity 300 ms, but the first line comes after 2 s: the timeout fires
STALLS = """api: 4.7.0
actions:
  - type: execute
    service: slowprint
    inputs: [{id: lines, value: 1}, {id: interval, value: 2}]
    maxInactivity: 300ms
"""
LONG_SLEEP = "api: 4.7.0\nactions:\n  - {type: execute, service: sleep, inputs: [{id: seconds, value: 60}]}\n"


def text(page: str) -> str:
    """A page's text, tags dropped, spaces folded: what a reader sees."""
    body = page.split('<main id="main">', 1)[1]
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", body)))


def chains_of(ui, submission_id: str) -> list[dict]:
    return ui.http.get("/processchains", params={"submissionId": submission_id}).json()


def running_chain(ui, submission_id: str, timeout_s: float = 20) -> str:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        found = [c for c in chains_of(ui, submission_id) if c["status"] == "RUNNING"]
        if found:
            return found[0]["id"]
        time.sleep(0.05)
    raise AssertionError(f"no chain of {submission_id} runs")


def test_list_filters_by_status_and_workflow_and_pages(ui) -> None:
    submission = ui.submit(THREE)
    assert ui.wait(submission)["status"] == "SUCCESS"
    ids = [c["id"] for c in chains_of(ui, submission)]  # newest first
    assert len(ids) == 3

    first = ui.http.get("/processchains", params={"submissionId": submission, "size": 2},
                        headers=HTML)
    assert first.status_code == 200 and first.headers["content-type"].startswith("text/html")
    seen = text(first.text)
    assert ids[0] in seen and ids[1] in seen and ids[2] not in seen
    assert "1–2 of 3" in seen and f'href="/workflows/{submission}"' in first.text
    nxt = re.search(r'<a class="button" rel="next" href="([^"]+)"', first.text)
    assert nxt and 'rel="prev"' not in first.text
    second = ui.http.get(html.unescape(nxt[1]), headers=HTML)
    seen = text(second.text)
    assert ids[2] in seen and ids[0] not in seen and "3–3 of 3" in seen
    assert 'rel="prev"' in second.text and 'rel="next"' not in second.text

    ok = text(ui.http.get("/processchains", params={"submissionId": submission,
                                                    "status": "SUCCESS"}, headers=HTML).text)
    assert all(i in ok for i in ids)
    none = text(ui.http.get("/processchains", params={"submissionId": submission,
                                                      "status": "ERROR"}, headers=HTML).text)
    assert "No process chains with status ERROR in this workflow" in none and ids[0] not in none
    bad = ui.http.get("/processchains", params={"status": "WHATEVER"}, headers=HTML)
    assert bad.status_code == 400 and "no process chain status `WHATEVER'" in text(bad.text)
    # the API on the same path for a client that asks for JSON
    api = ui.http.get("/processchains", params={"submissionId": submission, "size": 2})
    assert [c["id"] for c in api.json()] == ids[:2]


def test_the_list_updates_live(ui, browser_page) -> None:
    from playwright.sync_api import expect

    page = browser_page
    page.goto(ui.url + "/processchains?status=SUCCESS")
    expect(page.locator("h1")).to_have_text("Process chains")
    submission = ui.submit(THREE)
    assert ui.wait(submission)["status"] == "SUCCESS"
    for chain in chains_of(ui, submission):  # appear without reload, already SUCCESS
        row = page.locator(f"tr[data-chain='{chain['id']}']")
        expect(row).to_contain_text("SUCCESS")
        expect(row.get_by_role("link", name=submission)).to_have_attribute(
            "href", f"/workflows/{submission}")


def test_chain_page_shows_a_failed_attempt_its_exit_code_and_the_delay_before_the_next(ui) -> None:
    submission = ui.submit(FLAKY)
    assert ui.wait(submission)["status"] == "SUCCESS"
    chain_id, = [c["id"] for c in chains_of(ui, submission)]
    response = ui.http.get(f"/processchains/{chain_id}", headers=HTML)
    assert response.status_code == 200
    seen = text(response.text)
    assert re.search(r"services/bin/flaky --fail-times 1 --exit-code 3 --output \S+\.txt", seen)
    assert "retries 2 attempts; delay exponential 150ms" in seen  # the executable's policy
    assert re.search(r"1 FAILED failed with exit code 3 .*next attempt after 150ms — "
                     r"exponential 150ms\S* .*retryOn matched exit code 3", seen), seen
    assert re.search(r"2 SUCCESS succeeded", seen)
    assert f'href="/logs/processchains/{chain_id}?runNumber=1"' in response.text
    assert f'href="/workflows/{submission}"' in response.text
    run = ui.http.get(f"/processchains/{chain_id}/runs/1", headers=HTML)
    assert run.status_code == 200 and "failed with exit code 3" in text(run.text)
    # the API on the same paths
    assert ui.http.get(f"/processchains/{chain_id}").json()["id"] == chain_id
    assert ui.http.get(f"/processchains/{chain_id}/runs/1").json()["runNumber"] == 1
    missing = ui.http.get("/processchains/nosuchchain", headers=HTML)
    assert missing.status_code == 404 and "no process chain with ID `nosuchchain'" in text(missing.text)
    assert ui.http.get(f"/processchains/{chain_id}/runs/7", headers=HTML).status_code == 404


FALLBACK = """api: 4.7.0
vars: [{id: out}]
actions:
  - id: measure
    type: execute
    service: flaky
    inputs: [{id: fail_times, value: 5}, {id: exit_code, value: 3}]
    outputs: [{id: output_file, var: out}]
    retries: {maxAttempts: 1}
    fallback:
      service: stand-in
      outputs: [{id: output_file, var: out}]
"""


def test_chain_page_shows_which_attempt_was_the_fallback(ui) -> None:
    submission = ui.submit(FALLBACK)
    assert ui.wait(submission)["status"] == "SUCCESS"
    chain_id, = [c["id"] for c in chains_of(ui, submission)]
    seen = text(ui.http.get(f"/processchains/{chain_id}", headers=HTML).text)
    assert "fallback runs only if `measure' fails after all its attempts" in seen
    assert re.search(r"measure 1 FAILED failed with exit code 3", seen), seen
    assert re.search(r"measure\.fallback fallback 1 SUCCESS succeeded", seen), seen
    timeline = text(ui.http.get(f"/workflows/{submission}", headers=HTML).text)
    assert "Service flaky failed after all its attempts (exit code 3): its fallback stand-in " \
        "runs instead" in timeline
    chart = html.unescape(ui.http.get(f"/workflows/{submission}/timeline", headers=HTML).text)
    assert "fallback for measure: stand-in (measure.fallback), attempt 1: SUCCESS" in chart


def test_chain_page_names_the_timeout_that_fired(ui) -> None:
    submission = ui.submit(STALLS)
    assert ui.wait(submission)["status"] in ("CANCELLED", "ERROR")
    chain_id, = [c["id"] for c in chains_of(ui, submission)]
    seen = text(ui.http.get(f"/processchains/{chain_id}", headers=HTML).text)
    assert "maxInactivity 300ms (then CANCELLED)" in seen
    assert "TIMEOUT timeout: maxInactivity fired (maximum inactivity)" in seen
    assert "timed out after 300 ms (maximum inactivity)" in seen


def test_cancel_and_priority_from_the_page(ui, browser_page) -> None:
    from playwright.sync_api import expect

    submission = ui.submit(LONG_SLEEP)
    chain_id = running_chain(ui, submission)
    page = browser_page
    page.goto(f"{ui.url}/processchains/{chain_id}")
    expect(page.get_by_test_id("chain-status")).to_have_text("RUNNING")
    page.get_by_label("Priority").fill("7")
    page.get_by_role("button", name="Change priority").click()
    expect(page.locator("#chain-facts")).to_contain_text(re.compile(r"Priority\s*7"))
    assert ui.http.get(f"/processchains/{chain_id}").json()["priority"] == 7
    page.on("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Cancel chain").click()
    expect(page.get_by_test_id("chain-status")).to_have_text("CANCELLED")  # live, no reload
    expect(page.get_by_role("button", name="Cancel chain")).to_be_hidden()
    assert ui.wait(submission)["status"] == "CANCELLED"


def test_chain_page_at_phone_width_does_not_scroll_sideways(ui, chromium) -> None:
    submission = ui.submit(FLAKY)  # long command lines and rules
    assert ui.wait(submission)["status"] == "SUCCESS"
    chain_id, = [c["id"] for c in chains_of(ui, submission)]
    context = chromium.new_context(viewport=PHONE, is_mobile=True)
    try:
        page = context.new_page()
        for path in (f"/processchains/{chain_id}", "/processchains",
                     f"/logs/processchains/{chain_id}"):
            page.goto(ui.url + path)
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE["width"], f"{path} is {width} px wide on a phone"
    finally:
        context.close()
