"""Screenshots of Steep's own web UI served by `steepy serve` (`http.steepUi`).

    python bench/steep_ui_screens.py BUILD [--out docs/screenshots] [--chromium PATH]

BUILD is a build of Steep's UI (`ui/out/ui` after `npm ci && npm run build` in Steep's
repository; steepy ships no copy). The script starts `steepy serve --port 0 --agents 2` in a
temporary directory (with this repository's `services/` and `workflows/` linked in and a
steepy.yaml naming BUILD), drives Chromium through Playwright at 1280x800 and writes:

  steep-ui-1-new-submission.png  a workflow submitted through the API appears on the open list
  steep-ui-2-success.png         ... and its status changes to Success there, without a reload
  steep-ui-3-live-log-before.png a running chain's log page as it opens ...
  steep-ui-3-live-log.png        ... and 3 s later: new lines arrived over the event bus
  steep-ui-4-priority.png        the priority of a running workflow changed from its page
  steep-ui-5-cancelled.png       ... and that workflow cancelled from its Actions menu

Each step checks what the UI shows against the API and fails with a message if it does not
agree. Browser console errors, failed requests and HTTP errors are printed at the end.
Chromium is Debian's (`.ci/chromium start`); Playwright never downloads a browser here.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path

if __package__ in (None, ""):  # run as a file (python bench/steep_ui_screens.py)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.browsing import (ROOT, api, chains_of, chromium_executable, start_server,  # noqa: E402
                            stop_server, wait_for)

VIEWPORT = {"width": 1280, "height": 800}

# one chain silent for 3 s (time to open its log page), then printing a line every 0.2 s
# for 12 s (slowprint's maxInactivity is 5 s, its maxRuntime 20 s)
LIVE_LOG = """\
api: 4.7.0
name: Live log demo
actions:
  - type: execute
    service: slowprint
    inputs:
      - id: lines
        value: 60
      - id: interval
        value: 0.2
      - id: stall_first
        value: 3
"""

# three independent chains of about 16 s each: with two agents one of them waits
SLOW_THREE = """\
api: 4.7.0
name: Three slow printers
actions:
""" + "".join(f"""\
  - id: print_{n}
    type: execute
    service: slowprint
    inputs:
      - id: lines
        value: 40
      - id: interval
        value: 0.4
""" for n in (1, 2, 3))


def run(build: Path, out: Path, executable: str) -> None:
    from playwright.sync_api import sync_playwright, expect

    out.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="steep-ui-") as tmp:
        proc, base = start_server(Path(tmp), {"http": {"steepUi": str(build)}})
        print(f"steepy serve at {base}")
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=executable, headless=True,
                                            args=["--no-sandbox"])
                page = browser.new_page(viewport=VIEWPORT)
                page.on("console", lambda m: m.type in ("error", "warning") and problems.append(
                    f"console {m.type}: {m.text} ({page.url})"))
                page.on("pageerror", lambda e: problems.append(f"page error: {e} ({page.url})"))
                page.on("requestfailed", lambda r: problems.append(
                    f"request failed: {r.method} {r.url}: {r.failure}"))
                page.on("response", lambda r: r.status >= 400 and problems.append(
                    f"HTTP {r.status}: {r.request.method} {r.url}"))
                expect.set_options(timeout=60_000)

                # 1 and 2: a new submission appears on the open list, then turns Success
                page.goto(base + "/workflows")
                expect(page.get_by_role("heading", name="Workflows")).to_be_visible()
                page.wait_for_timeout(1500)  # the event bus is connected
                fan_out = (ROOT / "workflows" / "fan-out.yaml").read_bytes()
                sid = api(base, "/workflows", "POST", fan_out)["id"]
                print(f"submitted fan-out.yaml: {sid}")
                item = page.locator(".list-item", has=page.locator(f'a[href*="{sid}"]'))
                expect(item).to_be_visible()
                # at once, with the list's fade-in of a new item run to its end
                page.screenshot(path=out / "steep-ui-1-new-submission.png", animations="disabled")
                print("on the list as:", " | ".join(item.inner_text().split("\n")))
                expect(item.get_by_text("Success")).to_be_visible()
                document = api(base, f"/workflows/{sid}")
                assert document["status"] == "SUCCESS"
                # the counts the list keeps from the event bus agree with the API's
                expect(item).to_contain_text(f"{document['totalProcessChains']} completed")
                page.wait_for_timeout(500)
                page.screenshot(path=out / "steep-ui-2-success.png")

                # 3: a running chain's log tails live
                live = api(base, "/workflows", "POST", LIVE_LOG.encode())["id"]
                chain = wait_for("the live-log chain to run", lambda: next(
                    (c["id"] for c in chains_of(base, live) if c["status"] == "RUNNING"), None))
                # opened while the tool is still silent: every line comes over the event bus
                page.goto(f"{base}/logs/processchains/{chain}")
                log = page.locator(".processchainlog")
                expect(log).to_contain_text("line 3 of 60")
                first = log.inner_text()
                page.screenshot(path=out / "steep-ui-3-live-log-before.png")
                page.wait_for_timeout(3000)
                later = log.inner_text()
                numbers = [int(n) for n in re.findall(r"line (\d+) of 60", later)]
                print(f"log: {len(first.splitlines())} lines, 3 s later {len(numbers)}")
                if len(numbers) <= len(re.findall(r"line \d+ of 60", first)):
                    raise SystemExit(f"the log did not grow:\n{first}\n---\n{later}")
                if numbers != list(range(1, len(numbers) + 1)):
                    raise SystemExit(f"lines missing or out of order: {numbers}")
                assert api(base, f"/processchains/{chain}")["status"] == "RUNNING"
                page.screenshot(path=out / "steep-ui-3-live-log.png")

                # 4 and 5: change the priority of a running workflow, then cancel it
                slow = api(base, "/workflows", "POST", SLOW_THREE.encode())["id"]
                wait_for("the three chains", lambda: len(chains_of(base, slow)) == 3)
                wait_for("a chain of it running", lambda: any(
                    c["status"] == "RUNNING" for c in chains_of(base, slow)))
                page.goto(f"{base}/workflows/{slow}")
                priority = page.locator(".priority-label")
                expect(priority).to_contain_text("0 (normal)")
                priority.click()
                page.locator("input.priority-input").fill("10")
                page.keyboard.press("Enter")
                page.get_by_role("button", name="Change priority").click()
                expect(priority).to_contain_text("10 (high)")
                wait_for("priority 10 in the API", lambda: api(
                    base, f"/workflows/{slow}")["priority"] == 10, timeout=10)
                chains = chains_of(base, slow)
                print("chains after the priority change:",
                      [(c["status"], c.get("priority")) for c in chains])
                page.wait_for_timeout(500)
                page.screenshot(path=out / "steep-ui-4-priority.png")

                page.locator(".dropdown-btn", has_text="Actions").click()
                page.locator(".dropdown-menu li", has_text="Cancel").click()
                page.get_by_role("button", name="Cancel it now").click()
                expect(page.locator(".detail-header-right")).to_contain_text("Cancelled")
                wait_for("CANCELLED in the API", lambda: api(
                    base, f"/workflows/{slow}")["status"] == "CANCELLED", timeout=30)
                print("chains after cancelling:",
                      [c["status"] for c in chains_of(base, slow)])
                page.wait_for_timeout(500)
                page.screenshot(path=out / "steep-ui-5-cancelled.png")

                # the other pages, for errors only
                agent = api(base, "/agents")[0]["id"]
                for path in ["/", "/processchains", f"/processchains/{chain}", "/agents",
                             f"/agents/{agent}", "/services", "/services/slowprint",
                             "/plugins", "/vms", "/search?q=slow", "/new/workflow",
                             f"/workflows/{sid}"]:
                    before = len(problems)
                    page.goto(base + path)
                    page.wait_for_load_state("networkidle")
                    page.wait_for_timeout(500)
                    shown = page.locator("h1").first.inner_text() if page.locator("h1").count() \
                        else "(no heading)"
                    alerts = page.locator(".alert").all_inner_texts()
                    print(f"page {path}: {shown!r}" + (f", alerts: {alerts}" if alerts else "")
                          + (f", {len(problems) - before} problem(s)" if len(problems) > before
                             else ""))
                browser.close()
        finally:
            stop_server(proc)
    print(f"screenshots in {out}")
    # Steep's pages load fonts (and the editor of /new/workflow) from the Internet
    offline = [p for p in problems if "ERR_NAME_NOT_RESOLVED" in p]
    problems = [p for p in problems if p not in offline]
    hosts = sorted({urllib.parse.urlsplit(p.split()[3]).netloc for p in offline
                    if p.startswith("request failed:")})
    print(f"{len(problems)} browser problem(s), and {len(offline)} about hosts on the "
          f"Internet, which this machine may not reach: {', '.join(hosts)}")
    for problem in problems:
        print("  " + problem)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build", type=Path, help="Steep UI build (ui/out/ui)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--chromium", help="Chromium executable (default: .ci/chromium start)")
    args = parser.parse_args()
    build = args.build.resolve()
    if not (build / "index.html").is_file():
        sys.exit(f"{build}: no index.html, not a build of Steep's UI")
    run(build, args.out.resolve(), args.chromium or chromium_executable())


if __name__ == "__main__":
    main()
