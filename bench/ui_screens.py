"""Screenshots of steepy's own web UI for the README: `make screenshots`, or

    python bench/ui_screens.py [--out docs/screenshots] [--chromium PATH]

Starts `steepy serve --port 0 --agents 2 --submit workflows/demo.yaml` in a temporary
directory, submits a workflow that fails (a flaky tool that fails more often than it may
retry) and one that prints slowly, drives Debian's Chromium (`.ci/chromium start`) through
Playwright and writes `ui-*.png` (1280x800 unless the name says phone): the overview, the
list, the demo's page, its timeline chart and its graph, the failed workflow's page and its
chain with the failed attempts, a log tailing live, agents, a service, the editor showing an
error at its line, a workflow on a phone, and the overview in dark mode. Each step waits for
what it shows (a status, a line of the log) and fails with a message if it never comes.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):  # run as a file (python bench/ui_screens.py)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.browsing import (ROOT, api, chains_of, chromium_executable, start_server,  # noqa: E402
                            stop_server, wait_for)

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}

FAILING = """\
api: 4.7.0
name: Flaky tool that gives up
actions:
  - type: execute
    service: flaky
    inputs:
      - {id: fail_times, value: 9}
      - {id: exit_code, value: 3}
    outputs:
      - {id: output_file, var: result}
"""

SLOW_PRINT = """\
api: 4.7.0
name: Slow printer
actions:
  - type: execute
    service: slowprint
    inputs:
      - {id: lines, value: 60}
      - {id: interval, value: 0.25}
"""

INVALID = """\
api: 4.7.0
name: A typo
actions:
  - type: execute
    service: sleep
    inputz:
      - {id: seconds, value: 1}
"""


def final(base: str, submission_id: str) -> str:
    return wait_for(f"submission {submission_id} to finish", lambda: (
        api(base, f"/workflows/{submission_id}")["status"]
        not in ("ACCEPTED", "RUNNING") and api(base, f"/workflows/{submission_id}")["status"]),
        timeout=120)


def run(out: Path, executable: str) -> None:
    from playwright.sync_api import expect, sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="steepy-ui-") as tmp:
        proc, base = start_server(Path(tmp), args=("--submit", "workflows/demo.yaml"))
        print(f"steepy serve at {base}")
        try:
            demo = api(base, "/workflows?size=1")[0]["id"]
            failing = api(base, "/workflows", "POST", FAILING.encode())["id"]
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=executable, headless=True)
                context = browser.new_context(viewport=DESKTOP)
                page = context.new_page()
                expect.set_options(timeout=60_000)

                def shot(name: str, path: str, text: str | None = None) -> None:
                    page.goto(base + path)
                    if text:
                        expect(page.locator("main")).to_contain_text(text)
                    page.wait_for_timeout(300)
                    page.screenshot(path=out / f"ui-{name}.png")
                    print(f"ui-{name}.png  {path}")

                page.goto(base + "/workflows")
                assert final(base, demo) == "SUCCESS"
                assert final(base, failing) == "ERROR"
                slow = api(base, "/workflows", "POST", SLOW_PRINT.encode())["id"]
                shot("workflows", "/workflows", "RUNNING")
                shot("overview", "/", "Recent failures")
                shot("workflow", f"/workflows/{demo}", "SUCCESS")
                shot("timeline", f"/workflows/{demo}/timeline")
                shot("graph", f"/workflows/{demo}/graph", "done")
                shot("workflow-failed", f"/workflows/{failing}", "ERROR")
                chain = chains_of(base, failing)[0]["id"]
                shot("chain-failed", f"/processchains/{chain}", "exit code 3")
                running = wait_for("the slow printer to run", lambda: next(
                    (c["id"] for c in chains_of(base, slow) if c["status"] == "RUNNING"), None))
                shot("log-live", f"/logs/processchains/{running}", "line 8 of 60")
                shot("agents", "/agents", running)
                shot("service", "/services/flaky", "maxAttempts")

                page.goto(base + "/new/workflow")
                editor = page.locator("textarea").first
                editor.fill(INVALID)
                page.get_by_role("button", name="Submit").click()
                expect(page.locator("main")).to_contain_text("inputz")
                page.screenshot(path=out / "ui-editor-error.png")
                print("ui-editor-error.png  /new/workflow")
                context.close()

                phone = browser.new_context(viewport=PHONE, is_mobile=True)
                page = phone.new_page()
                shot("phone-workflow", f"/workflows/{failing}", "ERROR")
                phone.close()
                dark = browser.new_context(viewport=DESKTOP, color_scheme="dark")
                page = dark.new_page()
                shot("dark-overview", "/", "Recent failures")
                dark.close()
                browser.close()
            final(base, slow)
        finally:
            stop_server(proc)
    print(f"screenshots in {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--chromium", help="Chromium executable (default: .ci/chromium start)")
    args = parser.parse_args()
    run(args.out.resolve(), args.chromium or chromium_executable())


if __name__ == "__main__":
    main()
