"""The log page: the last part server-side, earlier ranges on demand, a live tail while the
tool prints, downloads answered by the API, and clear messages for runs that printed nothing."""

from __future__ import annotations

import re
import time

from tests.http.conftest import Server
from tests.ui.test_chains import HTML, STALLS, chains_of, running_chain, text

SLOW = """api: 4.7.0
actions:
  - type: execute
    service: slowprint
    inputs: [{id: lines, value: 40}, {id: interval, value: 0.1}]
"""
LINES = 9000  # "slowprint: line N of 9000\n": about 250 KB
BIG = f"""api: 4.7.0
actions:
  - type: execute
    service: slowprint
    inputs: [{{id: lines, value: {LINES}}}, {{id: interval, value: 0}}]
"""


def test_the_log_tails_while_the_tool_prints(ui, browser_page) -> None:
    from playwright.sync_api import expect

    submission = ui.submit(SLOW)
    chain_id = running_chain(ui, submission)
    page = browser_page
    page.goto(f"{ui.url}/logs/processchains/{chain_id}")
    page.evaluate("window.stillHere = true")  # gone if the page were reloaded
    log = page.get_by_test_id("log-text")
    expect(page.get_by_label("Follow")).to_be_checked()
    expect(log).to_contain_text("slowprint: line 4 of 40")
    assert "line 40 of 40" not in log.inner_text()  # it came while the tool ran
    expect(log).to_contain_text("slowprint: line 40 of 40")
    expect(page.get_by_test_id("tail-state")).to_have_text("run ended")
    expect(page.get_by_test_id("log-status")).to_have_text("SUCCESS")
    assert page.evaluate("window.stillHere") is True
    lines = [line for line in log.inner_text().splitlines() if line.startswith("slowprint")]
    assert lines == [f"slowprint: line {i} of 40" for i in range(1, 41)]  # each once, in order
    # "Follow" kept the view at the bottom of the (overflowing) log
    assert log.evaluate("e => e.scrollHeight > e.clientHeight && "
                        "e.scrollHeight - e.scrollTop - e.clientHeight < 8")


def test_a_large_log_loads_its_end_first_and_earlier_ranges_on_demand(ui, browser_page) -> None:
    from playwright.sync_api import expect

    submission = ui.submit(BIG)
    assert ui.wait(submission)["status"] == "SUCCESS"
    chain_id, = [c["id"] for c in chains_of(ui, submission)]
    whole = ui.http.get(f"/logs/processchains/{chain_id}").content
    assert len(whole) > 200_000

    served = ui.http.get(f"/logs/processchains/{chain_id}", headers=HTML)  # without script
    assert served.status_code == 200
    seen = text(served.text)
    assert f"line {LINES} of {LINES}" in seen and f"line 1 of {LINES} " not in seen
    assert len(served.text) < 100_000

    page = browser_page
    page.goto(f"{ui.url}/logs/processchains/{chain_id}")
    log = page.get_by_test_id("log-text")
    expect(log).to_contain_text(f"slowprint: line {LINES} of {LINES}")
    first = int(re.match(r"slowprint: line (\d+) of", log.inner_text())[1])
    assert first > 1
    page.get_by_role("button", name="Load earlier").click()
    expect(log).to_contain_text(f"slowprint: line {first - 1} of {LINES}\nslowprint: line {first} of")
    # load everything: the button goes away at the start, and the lines are whole and in order
    button = page.get_by_role("button", name="Load earlier")
    while button.is_visible():
        button.click()
        page.wait_for_function("!document.querySelector('.load-earlier').disabled")
    lines = log.inner_text().splitlines()
    assert lines == whole.decode().splitlines()

    with page.expect_download() as download:
        page.get_by_test_id("download").click()
    with open(download.value.path(), "rb") as f:
        assert f.read() == whole
    assert download.value.suggested_filename == f"{chain_id}.log"


def test_downloads_and_ranges_are_the_apis_and_silent_runs_say_so(ui) -> None:
    submission = ui.submit(STALLS)  # times out before its first line: no log file
    ui.wait(submission)
    chain_id, = [c["id"] for c in chains_of(ui, submission)]
    path = f"/logs/processchains/{chain_id}"
    # as in Steep, a run that printed nothing has no log: the API says 404 to a download
    # and to a range, while the page says why
    download = ui.http.get(path, params={"forceDownload": "true"}, headers=HTML)
    assert download.status_code == 404 and "could not be found" in download.text
    ranged = ui.http.get(path, headers={**HTML, "x-range": "bytes=-10"})
    assert ranged.status_code == 404
    page = ui.http.get(path, headers=HTML)
    assert page.status_code == 200 and "This run printed nothing" in text(page.text)
    assert ui.http.get(path + "?runNumber=4", headers=HTML).status_code == 404
    assert ui.http.get("/logs/processchains/nosuchchain", headers=HTML).status_code == 404


def test_each_run_has_its_log_and_the_chain_page_its_runs(ui) -> None:
    with open("workflows/process-chain-retries.yaml", encoding="utf-8") as f:
        submission = ui.submit(f.read())  # flaky fails two runs, the third succeeds
    assert ui.wait(submission)["status"] == "SUCCESS"
    chain_id, = [c["id"] for c in chains_of(ui, submission)]
    chain = text(ui.http.get(f"/processchains/{chain_id}", headers=HTML).text)
    assert "Chain retries 3 attempts; delay exponential 300ms" in chain
    assert all(f"Run {n}" in chain for n in (1, 2, 3))
    first = text(ui.http.get(f"/processchains/{chain_id}/runs/1", headers=HTML).text)
    assert "Run 1 ERROR" in first and "Run 3" not in first and "exit code 3" in first

    latest = ui.http.get(f"/logs/processchains/{chain_id}", headers=HTML).text
    assert "attempt 3: success" in text(latest) and "failing on purpose" not in text(latest)
    for n in (1, 2, 3):
        assert f'href="/logs/processchains/{chain_id}?runNumber={n}"' in latest
    assert "runNumber=3&amp;forceDownload=true" in latest
    run1 = text(ui.http.get(f"/logs/processchains/{chain_id}", params={"runNumber": 1},
                            headers=HTML).text)
    assert "flaky: attempt 1: failing on purpose" in run1 and "success" not in run1


GPU_SERVICE = """- id: needs_gpu
  name: Needs a GPU
  description: slowprint, but only on an agent that offers `gpu' (none here)
  path: services/bin/slowprint
  runtime: other
  requiredCapabilities: [gpu]
  parameters: []
"""


def test_a_chain_that_has_not_run_says_so_and_its_log_page_follows_it(tmp_path, chromium) -> None:
    from playwright.sync_api import expect

    services = tmp_path / "gpu.yaml"
    services.write_text(GPU_SERVICE)
    server = Server(tmp_path, "--agents", "1", env={"STEEPY_SERVICES": str(services)})
    try:
        submission = server.submit("api: 4.7.0\nactions:\n  - {type: execute, service: needs_gpu}\n")
        chain_id = None
        for _ in range(200):
            found = chains_of(server, submission)
            if found:
                chain_id = found[0]["id"]
                break
            time.sleep(0.05)
        assert chain_id and found[0]["status"] == "REGISTERED"
        served = server.http.get(f"/logs/processchains/{chain_id}", headers=HTML)
        assert served.status_code == 200
        assert "has not run yet; its log appears when it starts" in text(served.text)
        chain = text(server.http.get(f"/processchains/{chain_id}", headers=HTML).text)
        assert "REGISTERED" in chain and "Not run yet." in chain and "gpu" in chain

        context = chromium.new_context()
        page = context.new_page()
        page.goto(f"{server.url}/logs/processchains/{chain_id}")
        expect(page.get_by_test_id("log-message")).to_contain_text("has not run yet")
        assert server.http.put(f"/processchains/{chain_id}",
                               json={"status": "CANCELLED"}).status_code == 200
        expect(page.get_by_test_id("log-message")).to_contain_text("CANCELLED and never ran")
        context.close()
    finally:
        assert server.stop() == 0
