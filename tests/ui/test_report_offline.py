"""`steepy report`'s HTML file in Chromium, opened from disk with the network off: the
timeline chart and the attempts table render, styled by the inline stylesheets, and the page
asks for nothing but itself."""

from __future__ import annotations

from click.testing import CliRunner

from steepy.cli import main
from tests.cli.test_report import stored  # noqa: F401 (a fixture: a finished submission)
from tests.ui.conftest import DESKTOP, EXPECT_MS


def test_the_report_renders_from_file_offline(chromium, stored, tmp_path) -> None:  # noqa: F811
    from playwright.sync_api import expect

    db, sid = stored
    result = CliRunner().invoke(main, ["report", sid, "--db", db, "-o", "report.html"])
    assert result.exit_code == 0, result.output
    url = (tmp_path / "report.html").as_uri()

    context = chromium.new_context(viewport=DESKTOP, offline=True)
    context.set_default_timeout(EXPECT_MS)
    page = context.new_page()
    requested: list[str] = []
    failed: list[str] = []
    errors: list[str] = []
    page.on("request", lambda r: requested.append(r.url))
    page.on("requestfailed", lambda r: failed.append(f"{r.url}: {r.failure}"))
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(url)
        page.wait_for_load_state("load")
        expect(page.get_by_test_id("status")).to_have_text("SUCCESS")

        bars = page.locator(".tl-run")
        expect(bars).to_have_count(3)
        for i in range(3):
            box = bars.nth(i).bounding_box()
            assert box is not None and box["width"] > 3 and box["height"] > 10, box
        failed_part = page.locator(".tl-part.k-failed").first
        expect(failed_part).to_be_attached()
        # the inline stylesheets apply: a failed attempt is drawn in the UI's red
        assert failed_part.evaluate("e => getComputedStyle(e).backgroundColor") in (
            "rgb(185, 28, 28)", "rgb(248, 113, 113)")  # light or dark
        expect(page.get_by_test_id("axis")).to_be_visible()

        table = page.get_by_test_id("attempts")
        expect(table).to_be_visible()
        expect(table.locator("tbody tr")).to_have_count(5)
        expect(table.locator("tbody tr").first).to_contain_text("exit code 1; next attempt")
        expect(page.get_by_test_id("services").locator("tbody tr")).to_have_count(3)

        page.locator('.tl-label a[href="#chain-c2"]').click()  # a link stays in the file
        assert page.url == url + "#chain-c2"
    finally:
        context.close()
    assert requested == [url], requested
    assert failed == [] and errors == []
