"""The UI's frame: pages on the API's paths by content negotiation, the overview, the token
login (cookie HttpOnly, SameSite=Strict; CSRF token on state-changing requests), the cross-site
guard, `http.basePath`, phone width."""

from __future__ import annotations

import re

import httpx

from tests.http.conftest import Server
from tests.ui.conftest import PHONE

HTML = {"accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
SLEEP = "api: 4.7.0\nactions:\n  - {type: execute, service: sleep, inputs: [{id: seconds, value: 0}]}\n"


def test_a_browser_gets_the_page_a_client_gets_json(ui) -> None:
    page = ui.http.get("/", headers=HTML)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "<h1>Overview</h1>" in page.text and "cache-control" in page.headers
    api = ui.http.get("/", headers={"accept": "application/json"})
    assert api.json()["build"] == "steepy"
    assert ui.http.get("/").json()["build"] == "steepy"  # no Accept: the API, as Steep
    css = ui.http.get("/ui/static/steepy.css")
    assert css.status_code == 200 and "max-age" in css.headers["cache-control"]
    assert ui.http.get("/ui/static/../../pyproject.toml").status_code == 404
    # a mistyped address: a browser gets the UI's page (with its menu), a client the API's
    lost = ui.http.get("/workflowz", headers=HTML)
    assert lost.status_code == 404 and lost.headers["content-type"].startswith("text/html")
    assert "There is no page at `/workflowz&#39;." in lost.text and "<nav" in lost.text
    plain = ui.http.get("/workflowz", headers={"accept": "application/json"})
    assert plain.status_code == 404 and not plain.headers["content-type"].startswith("text/html")
    assert ui.http.post("/workflowz", headers=HTML).status_code == 404


def test_overview_shows_counts_and_links(ui, browser_page) -> None:
    from playwright.sync_api import expect

    submission = ui.submit(SLEEP)
    assert ui.wait(submission)["status"] == "SUCCESS"
    browser_page.goto(ui.url + "/")
    expect(browser_page.locator("h1")).to_have_text("Overview")
    expect(browser_page.get_by_role("link", name=re.compile(r"^SUCCESS \d+$")).first).to_be_visible()
    expect(browser_page.get_by_test_id("agents-busy")).to_contain_text("/ 2")
    browser_page.get_by_role("link", name="Workflows", exact=True).click()
    expect(browser_page).to_have_url(re.compile(r"/workflows$"))


def test_token_login_sets_a_strict_httponly_cookie_and_csrf_is_enforced(tmp_path,
                                                                        chromium) -> None:
    from playwright.sync_api import expect

    server = Server(tmp_path, "--agents", "1", token="s3cr;et token")
    try:
        context = chromium.new_context()
        page = context.new_page()
        page.goto(server.url + "/workflows")  # not logged in: the login form, then back here
        expect(page.get_by_role("heading", name="Log in")).to_be_visible()
        page.get_by_label("Token").fill("wrong")
        page.get_by_role("button", name="Log in").click()
        expect(page.get_by_role("alert")).to_contain_text("not the token")
        page.get_by_label("Token").fill("s3cr;et token")
        page.get_by_role("button", name="Log in").click()
        expect(page).to_have_url(re.compile(r"/workflows$"))
        cookie, = context.cookies()
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        assert page.evaluate("document.cookie") == ""  # no script can read the token
        page.goto(server.url + "/")

        # the page's own script may change state (its CSRF token goes along)...
        result = page.evaluate("steepy.api('POST', '/workflows', "
                               "'api: 4.7.0\\nactions: []\\n', 'application/x-yaml')")
        assert result["status"] == 202, result
        # ...a request with the cookie alone may not
        raw = page.evaluate("""fetch('/workflows', {method: 'POST', body: 'api: 4.7.0\\nactions: []\\n'})
                               .then(r => r.status)""")
        assert raw == 403
        # reading needs no CSRF token; the API still takes the bearer token as before
        assert page.evaluate("fetch('/workflows', {headers: {accept: 'application/json'}})"
                             ".then(r => r.status)") == 200
        assert server.http.get("/workflows").status_code == 200
        assert httpx.get(server.url + "/workflows").status_code == 401

        page.get_by_role("button", name="Log out").click()
        expect(page.get_by_role("heading", name="Log in")).to_be_visible()
        assert context.cookies() == []
        context.close()
    finally:
        assert server.stop() == 0


def test_requests_from_another_site_cannot_change_state(ui) -> None:
    for headers in ({"sec-fetch-site": "cross-site"}, {"origin": "http://evil.example"},
                    {"origin": "null"}):
        refused = httpx.post(ui.url + "/workflows", content=SLEEP, headers=headers)
        assert refused.status_code == 403, headers
        assert "Cross-site request refused" in refused.text
    for headers in ({"origin": ui.url, "sec-fetch-site": "same-origin"},
                    {"origin": ui.url},  # an older browser
                    # behind a proxy that rewrites Host: the browser's own word counts
                    {"origin": "https://lab.example.org", "sec-fetch-site": "same-origin"},
                    {"origin": "https://lab.example.org", "x-forwarded-host": "lab.example.org"}):
        assert httpx.post(ui.url + "/workflows", content=SLEEP,
                          headers=headers).status_code == 202, headers
    assert httpx.get(ui.url + "/workflows", headers={"sec-fetch-site": "cross-site"}).is_success


def test_base_path_prefixes_every_page_link_and_route(tmp_path, chromium) -> None:
    from playwright.sync_api import expect

    server = Server(tmp_path, "--agents", "1", env={"STEEPY_HTTP_BASEPATH": "/lab/steepy/"})
    try:
        assert server.url.endswith("/lab/steepy")
        root = server.url.removesuffix("/lab/steepy")
        assert httpx.get(root + "/workflows").status_code == 404
        assert server.http.get("/workflows").status_code == 200
        submission = server.submit(SLEEP)
        page = chromium.new_page()
        page.goto(server.url + "/")
        expect(page.locator("h1")).to_have_text("Overview")
        hrefs = page.eval_on_selector_all("a[href^='/']", "els => els.map(e => e.getAttribute('href'))")
        assert hrefs and all(h.startswith("/lab/steepy/") for h in hrefs), hrefs
        assert server.wait(submission)["status"] == "SUCCESS"
        page.close()
    finally:
        assert server.stop() == 0


def test_phone_width_has_no_sideways_scrolling(ui, chromium) -> None:
    context = chromium.new_context(viewport=PHONE, is_mobile=True)
    page = context.new_page()
    page.goto(ui.url + "/")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"page is {width} px wide on a {PHONE['width']} px screen"
    context.close()
