"""The web UI in a real browser: Debian's Chromium (installed and checked by `.ci/chromium`,
see tests/components.py) driven by Playwright, against `steepy serve` in a subprocess.

    def test_x(ui, browser_page): browser_page.goto(ui.url + "/workflows") ...

`ui` is one server for the session (two agents, the project's services); tests that need a
server of their own (a token, a base path) start one with `Server`. Playwright waits are
generous (`EXPECT_MS`): a page that updates live may take a second or two on a busy machine.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.components import component, unavailable
from tests.http.conftest import Server

EXPECT_MS = 20_000  # how long an expectation may wait for the page to get there
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}


@pytest.fixture(scope="module")
def chromium() -> Iterator:
    """One browser per test module: Playwright's sync API runs an event loop in this thread
    while the browser is open, which other modules' asyncio tests must not find running."""
    info = component("chromium")
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError as e:
        unavailable(f"Playwright not available: {e} (pip install -e '.[test]')")
    expect.set_options(timeout=EXPECT_MS)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=info["executable"], headless=True,
                                    args=["--disable-background-networking", "--no-first-run"])
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="session")
def ui(tmp_path_factory) -> Iterator[Server]:
    running = Server(tmp_path_factory.mktemp("ui"), "--agents", "2")
    yield running
    assert running.stop() == 0


@pytest.fixture
def browser_page(chromium) -> Iterator:
    """A fresh browser context (no cookies) and page at desktop width; JavaScript errors on
    the page fail the test."""
    context = chromium.new_context(viewport=DESKTOP)
    context.set_default_timeout(EXPECT_MS)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        yield page
    finally:
        context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"
