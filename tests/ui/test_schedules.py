"""The schedule pages (list, one schedule with its firings live, pause and remove from the
page, the new-schedule form with the API's located problems) and the notifications page
(without webhooks: how to configure them; with one that does not answer: its delivery)."""

from __future__ import annotations

import json
import re
import time

from playwright.sync_api import expect

from tests.http.conftest import Server
from tests.schedules.processes import NAP_VARS
from tests.ui.conftest import PHONE
import pytest

pytestmark = [pytest.mark.process]

HTML = {"accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
NAP = "api: 4.7.0\nactions:\n  - {type: execute, service: sleep, inputs: [{id: seconds, value: 0}]}\n"


def _add(ui, **fields) -> dict:
    response = ui.http.post("/schedules", json={"workflow": NAP, **fields})
    assert response.status_code == 201, response.text
    return response.json()


def test_list_shows_a_schedule_added_through_the_api(ui) -> None:
    s = _add(ui, cron="0 3 * * *", timezone="Europe/Berlin", name="nightly", paused=True)
    try:
        page = ui.http.get("/schedules", headers=HTML)
        assert page.status_code == 200
        assert f'href="/schedules/{s["id"]}"' in page.text and "nightly" in page.text
        assert "cron 0 3 * * * (Europe/Berlin)" in page.text and "paused" in page.text
        one = ui.http.get(f"/schedules/{s['id']}", headers=HTML)
        assert "<details>" in one.text and "service: sleep" in one.text
        assert ui.http.get("/schedules/nope", headers=HTML).status_code == 404
    finally:
        ui.http.delete(f"/schedules/{s['id']}")


def test_firings_appear_live_then_pause_and_remove_from_the_page(ui, browser_page) -> None:
    s = _add(ui, every="1s", name="often")
    page = browser_page
    page.goto(f"{ui.url}/schedules/{s['id']}")
    rows = page.locator("table.firings tbody tr")
    before = rows.count()
    expect(rows.nth(before)).to_be_visible()  # a new firing, without a reload
    link = page.locator("[data-testid=last]").locator("xpath=..").locator("a[href^='/workflows/']")
    expect(link.first).to_be_visible()
    page.get_by_role("button", name="Pause").click()
    expect(page.locator("[data-testid=state]")).to_have_text("paused")
    assert ui.http.get(f"/schedules/{s['id']}").json()["paused"] is True
    page.once("dialog", lambda d: d.accept())
    page.get_by_role("button", name="Remove").click()
    expect(page).to_have_url(f"{ui.url}/schedules")
    assert ui.http.get(f"/schedules/{s['id']}").status_code == 404


def test_new_schedule_form_shows_located_problems_then_lands_on_the_page(ui,
                                                                         browser_page) -> None:
    page = browser_page
    page.goto(f"{ui.url}/new/schedule")
    page.fill("#workflow", "api: 4.7.0\nactions:\n  - {type: execute, service: nosuch}\n")
    page.check("input[value=every]")
    page.fill("#trigger", "1h")
    page.fill("#name", "hourly")
    page.click("button[type=submit]")
    expect(page.locator("#problems li").first).to_contain_text("line")
    page.fill("#workflow", NAP_VARS)
    page.fill("#vars", "pause: [1, 2")  # no JSON: refused in the page, not sent as text
    page.click("button[type=submit]")
    expect(page.locator("#problems li").first).to_contain_text("line 1, vars.pause: not JSON")
    page.fill("#vars", "paus: 2")  # a typo: located by the API, nothing stored
    page.click("button[type=submit]")
    expect(page.locator("#problems li").first).to_contain_text("did you mean `pause'")
    page.fill("#vars", "pause: 2")
    page.click("button[type=submit]")
    expect(page).to_have_url(re.compile(r"/schedules/[^/]+$"))
    expect(page.locator("h1")).to_contain_text("hourly")
    expect(page.get_by_test_id("vars")).to_have_text("pause=2")
    schedule_id = page.url.rsplit("/", 1)[1]
    added = ui.http.get(f"/schedules/{schedule_id}").json()
    assert (added["every"], added["vars"]) == ("1h", {"pause": 2})
    ui.http.delete(f"/schedules/{schedule_id}")


def test_notifications_without_webhooks_says_how_to_configure_them(ui) -> None:
    page = ui.http.get("/notifications", headers=HTML)
    assert page.status_code == 200
    assert "No webhooks are configured" in page.text and "notifications:\n  webhooks:" in page.text


def test_notifications_list_a_delivery_to_an_unreachable_webhook(tmp_path) -> None:
    hook = "http://127.0.0.1:9/steepy"
    server = Server(tmp_path, "--agents", "1", env={
        "STEEPY_NOTIFICATIONS_WEBHOOKS": json.dumps([{"url": hook}]),
        "STEEPY_NOTIFICATIONS_DELAY": "200ms", "STEEPY_NOTIFICATIONS_MAXDELAY": "500ms",
        "STEEPY_NOTIFICATIONS_TIMEOUT": "1s", "STEEPY_NOTIFICATIONS_MAXATTEMPTS": "2"})
    try:
        server.wait(server.submit(NAP))
        end = time.monotonic() + 20
        while time.monotonic() < end:
            page = server.http.get("/notifications", headers=HTML).text
            if hook in page:
                break
            time.sleep(0.2)
        assert hook in page and "No webhooks are configured" not in page
        assert "PENDING" in page or "FAILED" in page
        assert "submission.status" in page
        while time.monotonic() < end:  # two tries 200 ms apart, then FAILED: the filter shows it
            failed = server.http.get("/notifications?failed=true", headers=HTML).text
            if "FAILED" in failed:
                break
            time.sleep(0.2)
        assert hook in failed and "PENDING" not in failed and 'aria-current="true">Failed' in failed
    finally:
        server.stop()


def test_phone_width_does_not_scroll_sideways(ui, chromium) -> None:
    s = _add(ui, cron="*/5 * * * *", name="a rather long schedule name for a phone", paused=True)
    context = chromium.new_context(viewport=PHONE)
    try:
        page = context.new_page()
        for path in ("/schedules", f"/schedules/{s['id']}", "/new/schedule", "/notifications"):
            page.goto(ui.url + path)
            assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), path
    finally:
        context.close()
        ui.http.delete(f"/schedules/{s['id']}")
