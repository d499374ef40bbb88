"""The "New workflow" editor: the example or a submission's source to start from, submitting
through the API, the API's problems at their lines (gutter, list, jump to the place), Tab and
Ctrl+Enter, phone width."""

from __future__ import annotations

import html
import re

from tests.http.conftest import Server
from tests.ui.conftest import PHONE

HTML = {"accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
TEXTAREA = re.compile(r"<textarea[^>]*>\n(.*?)</textarea>", re.S)

WRONG_KEY = """\
api: 4.7.0
name: wrong key
actions:
  - type: execute
    servce: sleep
"""
# the wrong key is `servce' (line 5) and the action lacks `service' (reported at line 4)
NOT_YAML = """\
api: 4.7.0
actions:
  - type: execute
   service: sleep
"""
VALID = """\
api: 4.7.0
name: from the editor
actions:
  - type: execute
    service: sleep
    inputs:
      - id: seconds
        value: 0
"""


def _textarea(text: str) -> str:
    found = TEXTAREA.search(text)
    assert found, text
    return html.unescape(found.group(1))


def _stored(ui) -> int:
    return int(ui.http.get("/workflows").headers["x-page-total"])


def test_the_page_starts_with_the_example_or_a_submissions_source(ui) -> None:
    moved = ui.http.get("/new?from=x", headers=HTML)
    assert moved.status_code == 301 and moved.headers["location"] == "/new/workflow?from=x"
    page = ui.http.get("/new/workflow", headers={"accept": "application/json"})  # UI only
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    example = _textarea(page.text)
    assert "service: sleep" in example

    source = "\n# kept as written\napi: 4.7.0\nname: again  # <b>&\nactions: []\n"
    submission = ui.submit(source)
    again = ui.http.get(f"/new/workflow?from={submission}", headers=HTML)
    assert _textarea(again.text) == source  # the leading newline and comments survive
    assert f'href="/workflows/{submission}"' in again.text

    missing = ui.http.get("/new/workflow?from=nope", headers=HTML)
    assert "There is no submission `nope&#39;" in missing.text
    assert _textarea(missing.text) == example


def test_problems_are_shown_at_their_lines_and_nothing_is_stored(ui, browser_page) -> None:
    from playwright.sync_api import expect

    page = browser_page
    before = _stored(ui)
    page.goto(ui.url + "/new/workflow")
    area = page.get_by_label(re.compile("^Workflow"))
    expect(area).to_have_value(re.compile("service: sleep"))
    area.fill(WRONG_KEY)
    page.get_by_role("button", name="Submit").click()

    problems = page.locator("#editor-errors li")
    expect(page.locator("#editor-message")).to_contain_text("Invalid workflow")
    expect(problems.filter(has_text="4:5: actions[0]: `service' is required")).to_have_count(1)
    expect(problems.filter(has_text=re.compile(r"^5:\d+: actions\[0\]\.servce: unknown property")))\
        .to_have_count(1)
    expect(page.locator('.editor-gutter [data-line="4"].error')).to_be_visible()
    expect(page.locator('.editor-gutter [data-line="5"].error')).to_be_visible()
    expect(page.locator(".editor-gutter .error")).to_have_count(2)
    expect(page.locator(".editor-highlight > span").nth(3)).to_have_class("marked")
    expect(area).to_have_value(WRONG_KEY)

    problems.filter(has_text="servce").get_by_role("button").click()
    expect(area).to_be_focused()
    line5 = WRONG_KEY.index("    servce")
    column = int(re.search(r"^5:(\d+):", problems.nth(1).inner_text()).group(1))
    assert area.evaluate("a => [a.selectionStart, a.selectionEnd]") == [line5 + column - 1] * 2

    area.evaluate("a => a.setSelectionRange(0, 0)")  # a line above: the problems move down
    page.keyboard.type("# a note")
    page.keyboard.press("Enter")
    expect(page.locator(".editor-gutter .error")).to_have_count(2)
    expect(page.locator('.editor-gutter [data-line="5"].error')).to_be_visible()
    expect(page.locator('.editor-gutter [data-line="6"].error')).to_be_visible()
    expect(problems.first).to_have_text("5:5: actions[0]: `service' is required")
    area.evaluate("a => a.setSelectionRange(0, 9)")  # that line deleted: back up again
    page.keyboard.press("Backspace")
    expect(area).to_have_value(WRONG_KEY)
    expect(page.locator('.editor-gutter [data-line="4"].error')).to_be_visible()
    expect(problems.first).to_have_text("4:5: actions[0]: `service' is required")
    area.evaluate(f"a => a.setSelectionRange({line5}, {len(WRONG_KEY)})")  # line 5 deleted
    page.keyboard.press("Delete")
    expect(page.locator(".editor-gutter .error")).to_have_count(1)
    expect(problems.nth(1).get_by_role("button")).to_be_disabled()  # its line is gone

    area.fill(NOT_YAML)
    area.press("Control+Enter")
    expect(problems).to_have_count(1)
    expect(problems.first).to_contain_text(re.compile(r"^4:4: not valid YAML"))
    expect(page.locator(".editor-gutter .error")).to_have_count(1)
    expect(page.locator('.editor-gutter [data-line="4"].error')).to_be_visible()
    expect(area).to_have_value(NOT_YAML)
    assert _stored(ui) == before


def test_a_valid_workflow_lands_on_its_page(ui, browser_page) -> None:
    from playwright.sync_api import expect

    page = browser_page
    page.goto(ui.url + "/new")  # the example, submitted as it is
    example = page.get_by_label(re.compile("^Workflow")).input_value()
    page.get_by_role("button", name="Submit").click()
    expect(page).to_have_url(re.compile(r"/workflows/[a-z0-9]+$"))
    submission = page.url.rsplit("/", 1)[1]
    found = ui.http.get(f"/workflows/{submission}").json()
    assert found["name"] == "A short nap" and found["source"] == example


def test_tab_indents_and_ctrl_enter_submits(ui, browser_page) -> None:
    from playwright.sync_api import expect

    page = browser_page
    page.goto(ui.url + "/new/workflow")
    area = page.get_by_label(re.compile("^Workflow"))
    area.fill("a:\nb")
    area.evaluate("a => { a.focus(); a.setSelectionRange(3, 3); }")  # before `b'
    page.keyboard.press("Tab")
    expect(area).to_have_value("a:\n  b")
    expect(area).to_be_focused()  # Tab stayed in the text
    page.keyboard.press("Shift+Tab")
    expect(area).to_have_value("a:\nb")
    area.evaluate("a => a.setSelectionRange(0, 4)")  # two lines: both indented
    page.keyboard.press("Tab")
    expect(area).to_have_value("  a:\n  b")
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")  # after Esc, Tab leaves the text
    expect(area).not_to_be_focused()
    expect(area).to_have_value("  a:\n  b")

    area.fill(VALID.replace("from the editor", "by keyboard"))
    area.press("Control+Enter")
    expect(page).to_have_url(re.compile(r"/workflows/[a-z0-9]+$"))
    submission = page.url.rsplit("/", 1)[1]
    assert ui.http.get(f"/workflows/{submission}").json()["name"] == "by keyboard"


def test_phone_width_does_not_scroll_sideways(ui, chromium) -> None:
    from playwright.sync_api import expect

    context = chromium.new_context(viewport=PHONE)
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(ui.url + "/new/workflow")
        area = page.get_by_label(re.compile("^Workflow"))
        area.fill(WRONG_KEY + "# " + "a very long line " * 20 + "\n")
        page.get_by_role("button", name="Submit").click()
        expect(page.locator(".editor-gutter .error")).to_have_count(2)
        wide = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert wide[0] <= wide[1], wide
        assert area.bounding_box()["width"] > 250
        assert not errors
    finally:
        context.close()


def test_a_lost_login_keeps_the_text_and_a_body_too_large_shows_its_message(tmp_path,
                                                                          chromium) -> None:
    """Behind a base path, with a token: the session ends while editing (401), the text
    survives logging in again and is then submitted; a text over http.postMaxSize gets 413."""
    from playwright.sync_api import expect

    server = Server(tmp_path, "--agents", "1", token="tok",
                    env={"STEEPY_HTTP_BASEPATH": "/lab", "STEEPY_HTTP_POSTMAXSIZE": "4096"})
    context = chromium.new_context()
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(server.url + "/new/workflow")
        page.get_by_label("Token").fill("tok")
        page.get_by_role("button", name="Log in").click()
        area = page.get_by_label(re.compile("^Workflow"))
        expect(area).to_have_value(re.compile("service: sleep"))

        area.fill("# " + "x" * 5000 + "\n" + VALID)
        page.get_by_role("button", name="Submit").click()
        expect(page.locator("#editor-message")).to_contain_text("4096")  # the API's 413 message
        expect(page.locator("#editor-errors li")).to_have_count(0)

        area.fill(VALID)
        context.clear_cookies()  # the session ends (logged out in another tab)
        page.get_by_role("button", name="Submit").click()
        expect(page.locator("#editor-message")).to_contain_text("Missing bearer token")
        page.get_by_role("link", name="Log in (your text is kept)").click()
        page.get_by_label("Token").fill("tok")
        page.get_by_role("button", name="Log in").click()
        expect(page).to_have_url(server.url + "/new/workflow")
        expect(area).to_have_value(VALID)
        expect(page.locator("#editor-state")).to_contain_text("before the login")
        page.get_by_role("button", name="Submit").click()
        expect(page).to_have_url(re.compile(r"/lab/workflows/[a-z0-9]+$"))
        submission = page.url.rsplit("/", 1)[1]
        assert server.http.get(f"/workflows/{submission}").json()["source"] == VALID
        assert not errors
    finally:
        context.close()
        assert server.stop() == 0
