"""The workflow pages: `/workflows` (live list, status filter, paging, search) and
`/workflows/{id}` (facts, chains, timeline, source, actions), in a real browser where the
behaviour is the browser's (live updates, buttons, dialogs, layout), with plain HTTP elsewhere."""

from __future__ import annotations

import re
import time
import uuid

import psutil
import pytest

from tests.ui.conftest import PHONE

HTML = {"accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


def sleep_workflow(seconds: float, name: str) -> str:
    return (f"api: 4.7.0\nname: {name}\nactions:\n"
            f"  - {{type: execute, service: sleep, inputs: [{{id: seconds, value: {seconds}}}]}}\n")


def flaky_workflow(fail_times: int, name: str) -> str:
    """The flaky service tries 3 times (services/demo.yaml); it fails `fail_times` times."""
    return (f"api: 4.7.0\nname: {name}\nvars: [{{id: out}}]\nactions:\n"
            f"  - type: execute\n    service: flaky\n"
            f"    inputs: [{{id: fail_times, value: {fail_times}}}]\n"
            f"    outputs: [{{id: output_file, var: out}}]\n")


def unique(word: str) -> str:
    return f"{word}-{uuid.uuid4().hex[:8]}"


def open_live(page, url: str) -> None:
    """Open a live page and wait until its feed is connected (events from then on count)."""
    with page.expect_response(lambda r: "/events" in r.url):
        page.goto(url)
    page.evaluate("window.notReloaded = true")


@pytest.fixture(scope="module")
def failed(ui) -> str:
    """A submission whose only chain failed all 3 attempts of the flaky tool."""
    submission = ui.submit(flaky_workflow(9, unique("always-fails")))
    assert ui.wait(submission)["status"] == "ERROR"
    return submission


def test_a_submission_appears_on_the_open_list_and_turns_success(ui, browser_page) -> None:
    from playwright.sync_api import expect

    page = browser_page
    open_live(page, ui.url + "/workflows")
    expect(page.locator("h1")).to_have_text("Workflows")
    name = unique("appears")
    submission = ui.submit(sleep_workflow(1, name))
    row = page.locator(f"tr[data-id='{submission}']")
    expect(row.get_by_role("link", name=name)).to_be_visible()
    expect(row.locator(".badge")).to_have_text("SUCCESS")
    expect(row.locator(".count")).to_have_text("1 / 1")
    expect(page.get_by_role("link", name=re.compile(r"^SUCCESS [1-9][0-9]*$"))).to_be_visible()
    assert page.evaluate("window.notReloaded") is True  # updated in place
    row.get_by_role("link", name=name).click()
    expect(page.get_by_test_id("status")).to_have_text("SUCCESS")


def test_a_failed_workflow_tells_which_attempt_failed_and_why(ui, browser_page, failed) -> None:
    from playwright.sync_api import expect

    page = browser_page
    page.goto(f"{ui.url}/workflows/{failed}")
    expect(page.get_by_test_id("status")).to_have_text("ERROR")
    expect(page.get_by_test_id("error-message")).to_have_text("All process chains failed")
    timeline = page.get_by_test_id("timeline")
    for attempt in (1, 2, 3):
        line = timeline.locator("li[data-kind='chain.attemptFailed']").nth(attempt - 1)
        expect(line).to_contain_text(f"Attempt {attempt} of service flaky")
        expect(line).to_contain_text("failed: exit code 1")
        expect(line.locator("pre")).to_contain_text(f"flaky: attempt {attempt}: failing on purpose")
    retry = timeline.locator("li[data-kind='chain.retryScheduled']").first
    expect(retry).to_contain_text("Retry scheduled: attempt 2 of service flaky after 100ms")
    expect(retry.locator(".due time")).to_have_text(re.compile(r"^\d+ s ago$"))  # relative
    expect(timeline.locator("li").last).to_contain_text("Finished: ERROR")
    chains = page.locator("section.chain-group[data-status='ERROR']")
    expect(chains).to_contain_text("exited with code 1")
    expect(page.get_by_role("button", name="Retry")).to_be_visible()
    expect(page.get_by_role("button", name="Cancel")).to_have_count(0)
    expect(page.get_by_role("link", name="Resubmit…")).to_have_attribute(
        "href", f"/new/workflow?from={failed}")
    page.locator("details.source summary").click()
    expect(page.get_by_test_id("source")).to_contain_text("service: flaky")


def _sleep_process(server_pid: int, seconds: str, timeout_s: float = 20) -> psutil.Process:
    """The `sleep SECONDS` process started under the server (its agents' tools)."""
    end = time.monotonic() + timeout_s
    while True:
        for proc in psutil.Process(server_pid).children(recursive=True):
            try:
                if proc.cmdline() == ["sleep", seconds]:
                    return proc
            except psutil.NoSuchProcess:
                continue
        assert time.monotonic() < end, f"no `sleep {seconds}' under the server"
        time.sleep(0.1)


def test_priority_and_cancel_from_the_page_end_the_tool(ui, browser_page) -> None:
    from playwright.sync_api import expect

    page = browser_page
    submission = ui.submit(sleep_workflow(60, unique("long")))
    assert ui.wait(submission, ("RUNNING",))["status"] == "RUNNING"
    tool = _sleep_process(ui.proc.pid, "60")
    assert tool.is_running()
    open_live(page, f"{ui.url}/workflows/{submission}")
    expect(page.get_by_test_id("status")).to_have_text("RUNNING")
    expect(page.locator("section.chain-group[data-status='RUNNING']")).to_contain_text("sleep")

    page.get_by_label("Priority").fill("7")
    page.get_by_role("button", name="Change priority").click()
    expect(page.get_by_test_id("priority")).to_have_text("7")
    assert ui.http.get(f"/workflows/{submission}").json()["priority"] == 7
    expect(page.get_by_test_id("timeline")).to_contain_text("Priority changed to 7")

    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Cancel").click()
    expect(page.get_by_test_id("status")).to_have_text("CANCELLED")
    expect(page.get_by_role("button", name="Retry")).to_be_visible()
    expect(page.locator("form.priority")).to_be_hidden()  # follows the status
    tool.wait(timeout=15)  # ended (raises TimeoutExpired otherwise)
    assert not tool.is_running()
    assert ui.http.get(f"/workflows/{submission}").json()["status"] == "CANCELLED"
    assert page.evaluate("window.notReloaded") is True


def test_retry_from_the_page(ui, browser_page) -> None:
    from playwright.sync_api import expect

    page = browser_page
    # three failures use up its 3 attempts; the retry's first attempt succeeds
    submission = ui.submit(flaky_workflow(3, unique("retried")))
    assert ui.wait(submission)["status"] == "ERROR"
    open_live(page, f"{ui.url}/workflows/{submission}")
    page.get_by_role("button", name="Retry").click()
    expect(page.get_by_test_id("status")).to_have_text("SUCCESS")
    expect(page.get_by_test_id("timeline")).to_contain_text("Retried (was ERROR)")
    expect(page.get_by_test_id("error-message")).to_have_count(0)
    found = ui.wait(submission)
    assert found["status"] == "SUCCESS" and found["succeededProcessChains"] == 1
    kinds = [e["kind"] for e in ui.http.get(f"/workflows/{submission}/events").json()]
    assert "submission.retried" in kinds


def _range(html: str) -> str:
    return re.search(r'data-testid="page-range">([^<]*)<', html).group(1)


def _rows(html: str) -> list[str]:
    return re.findall(r'<tr data-id="([^"]+)">', html)


def test_filter_paging_and_search(ui, failed) -> None:
    prefix = unique("paged")
    ids = [ui.submit(sleep_workflow(0, f"{prefix}-{n}")) for n in range(3)]
    for submission in ids:
        assert ui.wait(submission)["status"] == "SUCCESS"
    get = lambda path: ui.http.get(path, headers=HTML)  # noqa: E731

    # a plain word finds submissions by name, newest first, in pages
    page = get(f"/workflows?q={prefix}")
    assert page.status_code == 200 and _rows(page.text) == ids[::-1]
    assert _range(page.text) == "1–3 of 3"
    first = get(f"/workflows?q={prefix}&size=2")
    assert _rows(first.text) == ids[:0:-1] and _range(first.text) == "1–2 of 3"
    following = re.search(r'<a class="button" rel="next" href="([^"]+)"', first.text).group(1)
    assert "offset=2" in following and "size=2" in following
    second = get(following.replace("&amp;", "&"))
    assert _rows(second.text) == ids[:1] and _range(second.text) == "3–3 of 3"
    assert 'rel="prev"' in second.text and 'rel="next"' not in second.text
    # ... and by id
    assert _rows(get(f"/workflows?q={ids[1]}").text) == [ids[1]]
    # the search within a status
    assert _rows(get(f"/workflows?q={prefix}&status=ERROR").text) == []
    assert "No workflow matches" in get(f"/workflows?q={prefix}&status=ERROR").text

    # the status filter, with paging as the API counts
    total = int(ui.http.get("/workflows?status=SUCCESS").headers["x-page-total"])
    assert total >= 3
    filtered = get("/workflows?status=SUCCESS&size=1&offset=1")
    assert _range(filtered.text) == f"2–2 of {total}"
    assert re.findall(r'<span class="badge status-\w+">(\w+)</span>', filtered.text) == ["SUCCESS"]
    errors = get("/workflows?status=ERROR")
    assert failed in _rows(errors.text)
    assert 'href="/workflows?status=ERROR" aria-current="true"' in errors.text

    # bad input: a located message, never a traceback
    bad = get("/workflows?q=sort is:processchain")
    assert bad.status_code == 400
    assert "q:1:6: is:processchain: this list shows workflows" in bad.text
    assert get("/workflows?q=sort start:>9999-12-31").status_code == 200  # no date is too far
    chains = get("/workflows?q=is:processchain")
    assert chains.status_code == 400 and "q:1:1: is:processchain: this list shows workflows" in chains.text
    status = get("/workflows?status=DONE")
    assert status.status_code == 400 and "status: `DONE&#39; is not a status" in status.text
    for response in (bad, chains, status):
        assert "Traceback" not in response.text and "<h1>Workflows</h1>" in response.text

    # the API keeps its paths; a missing submission is the not-found page
    assert ui.http.get(f"/workflows?q={prefix}").headers["content-type"] == "application/json"
    assert ui.http.get(f"/workflows/{ids[0]}").json()["id"] == ids[0]
    missing = get("/workflows/nosuchid")
    assert missing.status_code == 404 and "There is no workflow with ID" in missing.text


def test_phone_width_has_no_sideways_scrolling(ui, chromium, failed) -> None:
    from playwright.sync_api import expect

    context = chromium.new_context(viewport=PHONE)
    try:
        page = context.new_page()
        for path in (f"/workflows/{failed}", "/workflows"):
            page.goto(ui.url + path)
            if path != "/workflows":
                page.locator("details.source summary").click()
                expect(page.get_by_test_id("source")).to_be_visible()
            expect(page.locator("h1")).to_be_visible()
            width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
            assert width[0] <= width[1], f"{path} scrolls sideways: {width}"
    finally:
        context.close()


def test_timeline_lines_fold_registrations_and_keep_unknown_kinds() -> None:
    from steepy.ui.pages.workflows_events import timeline

    at = "2026-01-01T10:00:00.%06dZ"
    events = [{"id": n, "time": at % n, "kind": "chain.registered", "chainId": f"c{n}",
               "executables": 1} for n in range(1, 4)]
    events += [{"id": 4, "time": at % 4, "kind": "chain.progress", "chainId": "c1", "progress": .5},
               {"id": 5, "time": at % 5, "kind": "chain.attemptFailed", "chainId": "c1",
                "serviceId": "slowprint", "attempt": 1, "timeoutKind": "maxInactivity",
                "exitCode": None, "message": "no output for 5s"},
               {"id": 6, "time": at % 6, "kind": "chain.somethingNew", "chainId": "c1",
                "serviceId": "cp"}]
    lines, left_out = timeline(events)
    assert [line.text for line in lines] == [
        "3 process chains registered",
        "Attempt 1 of service slowprint failed: maxInactivity timeout",
        "somethingNew (serviceId: cp)"]
    assert lines[1].detail == "no output for 5s" and left_out == 0
    assert timeline(events, limit=1) == (lines[-1:], 2)


def test_timeline_lines_fold_chains_that_reused_one_submissions_work_together() -> None:
    """A rerun of 10,000 chains reads as two lines, not 20,000: those registered, then those
    that reused the work of one submission, in one second (another submission, or a later
    second, is a line of its own)."""
    from steepy.ui.pages.workflows_events import timeline

    at = "2026-01-01T10:00:0%d.%06dZ"
    events = [{"id": n, "time": at % (0, n), "kind": "chain.registered", "chainId": f"c{n}",
               "executables": 1} for n in range(1, 4)]
    events += [{"id": 3 + n, "time": at % (0, n), "kind": "chain.reused", "chainId": f"c{n}",
                "fromSubmissionId": "s1", "fromChainId": f"e{n}"} for n in range(1, 3)]
    events += [{"id": 6, "time": at % (0, 6), "kind": "chain.reused", "chainId": "c3",
                "fromSubmissionId": "s2", "fromChainId": "e3"},
               {"id": 7, "time": at % (1, 7), "kind": "chain.reused", "chainId": "c4",
                "fromSubmissionId": "s2", "fromChainId": "e4"}]
    lines, _ = timeline(events)
    assert [(line.text, line.count, line.chain, line.tone) for line in lines] == [
        ("3 process chains registered", 3, None, ""),
        ("2 process chains reused the work of submission s1", 2, None, "status-reused"),
        ("Reused the work of process chain e3 of submission s2", 1, "c3", "status-reused"),
        ("Reused the work of process chain e4 of submission s2", 1, "c4", "status-reused")]


def test_search_problems_are_located() -> None:
    from steepy.search import parse_query
    from steepy.ui.pages.workflows_search import problem

    for text, expected in (("a\n  is:processchain",
                            "q:2:3: is:processchain: this list shows workflows; the Search page "
                            "(/search) finds process chains"),
                           ("x 1999-01-01..9999-12-31T23:59", None),
                           ("is:processchain is:workflow 2026-01-01..2026-02-01", None),
                           ("name:x", None)):
        assert problem(text, parse_query(text)) == expected
