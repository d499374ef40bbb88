"""The agents, services and plugins pages: the `ui` server's two agents (one turning busy with a
running chain without reload), the project's services with their parameters and policies in
words, and the plugins (none added on `ui`; one configured in steepy.yaml in-process)."""

from __future__ import annotations

import re
import socket
import textwrap
import warnings

from tests.ui.test_site import HTML

NAP = "api: 4.7.0\nactions:\n  - {type: execute, service: sleep, inputs: [{id: seconds, value: 2}]}\n"


def test_agents_page_shows_what_each_runs_live(ui, browser_page) -> None:
    from playwright.sync_api import expect

    page = browser_page
    page.goto(ui.url + "/agents")
    rows = page.locator("tr[data-agent]")
    expect(rows).to_have_count(2)
    expect(page.get_by_test_id("agents-summary")).to_contain_text("2 live agents, 0 busy")
    expect(rows.first).to_contain_text(socket.gethostname())  # the host the heartbeat stores
    expect(rows.first.locator("time[data-relative]").first).to_have_text(re.compile(r" ago$"))
    busy = rows.filter(has=page.locator(".badge", has_text="busy"))
    expect(busy).to_have_count(0)

    submission = ui.submit(NAP)
    expect(busy).to_have_count(1)  # live: no reload
    chains = ui.http.get("/processchains", params={"submissionId": submission}).json()
    chain_id = chains[0]["id"]
    expect(busy.get_by_role("link", name=chain_id)).to_have_attribute(
        "href", f"/processchains/{chain_id}")
    expect(busy.get_by_role("link", name=submission)).to_have_attribute(
        "href", f"/workflows/{submission}")
    expect(busy).to_contain_text("(sleep)")
    expect(page.get_by_test_id("agents-summary")).to_contain_text("2 live agents, 1 busy")

    busy.locator("a").first.click()  # the agent's own page
    expect(page.get_by_test_id("agent-state")).to_contain_text("busy")
    expect(page.get_by_role("link", name=chain_id)).to_be_visible()
    expect(page.get_by_test_id("agent-state")).to_contain_text("idle")  # live: it finished
    assert ui.wait(submission)["status"] == "SUCCESS"

    missing = ui.http.get("/agents/nobody", headers=HTML)
    assert missing.status_code == 404 and "no live agent with ID `nobody&#39;" in missing.text
    assert ui.http.get("/agents").json()[0]["id"]  # the API is as before


def _facts(html: str, testid: str) -> dict[str, str]:
    block = re.search(rf'data-testid="{testid}">(.*?)</dl>', html, re.S).group(1)
    return dict(re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", block, re.S))


def test_services_list_and_detail_show_parameters_and_policies(ui) -> None:
    listed = ui.http.get("/services", headers=HTML).text
    for service in ("sleep", "cp", "flaky", "slowprint", "split"):
        assert f'<a href="/services/{service}" class="mono">{service}</a>' in listed
    assert "Flaky tool" in listed and "<code>other</code>" in listed

    flaky = ui.http.get("/services/flaky", headers=HTML).text
    row = re.search(r'<tr data-parameter="fail_times">(.*?)</tr>', flaky, re.S).group(1)
    cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
    assert cells == ["fail_times", "Failures", "input", "integer", "1..1", "2", "--fail-times",
                     "Number of attempts that fail before one succeeds"]
    assert '<tr data-parameter="output_file">' in flaky and "(.txt)" in flaky
    assert _facts(flaky, "retries") == {
        "maxAttempts": "3 (the first and 2 retries)",
        "delay": "exponential 100ms*2^(n-1), max 1s, jitter none",
        "pauses": "100ms, 200ms (before jitter)",
        "abortOn": "failures with exit code 2 are never retried"}
    assert _facts(flaky, "timeouts") == {"deadline": (
        "30s: when all attempts and pauses together take longer than 30s, the attempt is "
        "stopped and the chain ends ERROR")}

    slowprint = _facts(ui.http.get("/services/slowprint", headers=HTML).text, "timeouts")
    assert list(slowprint) == ["maxInactivity", "maxRuntime"]
    assert slowprint["maxInactivity"].startswith("5s: when no output line for 5s")
    assert slowprint["maxInactivity"].endswith("chain ends CANCELLED")
    assert slowprint["maxRuntime"].startswith("20s: ") and slowprint["maxRuntime"].endswith("ERROR")
    sleep = ui.http.get("/services/sleep", headers=HTML).text
    assert "None: a failed attempt is not retried" in sleep

    missing = ui.http.get("/services/nope", headers=HTML)
    assert missing.status_code == 404 and "no service with ID `nope&#39;" in missing.text
    assert ui.http.get("/services/flaky").json()["retries"]["maxAttempts"] == 3  # the API


def test_plugins_page_without_added_plugins_says_how_to_add_one(ui) -> None:
    html = ui.http.get("/plugins", headers=HTML).text
    assert 'data-testid="no-plugins"' in html and "No plugins are added" in html
    assert "<code>steepy.outputAdapters</code>" in html and "plugins:\n  - name:" in html
    assert re.findall(r'<tr data-plugin="([^"]+)">', html) == ["other", "docker", "slurm"]  # steepy's own
    assert "<code>steepy.runtimes.docker:DockerRuntime</code>" in html
    assert ui.http.get("/plugins", headers={"accept": "application/json"}).json()[0]["name"] == "other"


PLUGINS = '''
class Adapter:
    def adapt(self, output, chain):
        return []


def first(chains, workflow):
    return chains


def second(chains, workflow):
    return chains
'''


def test_plugins_page_groups_configured_plugins_by_kind(tmp_path, monkeypatch) -> None:
    import steepy.plugins.pluginset as pluginset
    from steepy.config import load_config
    from steepy.http import ApiContext, create_app
    from steepy.registry import open_registry

    with warnings.catch_warnings():  # Starlette would like httpx2; httpx works
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    module = "uiplugins_" + tmp_path.name.replace("-", "_")
    (tmp_path / f"{module}.py").write_text(PLUGINS)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "steepy.yaml").write_text(textwrap.dedent(f"""\
        plugins:
          - {{name: lines, type: outputAdapter, object: "{module}:Adapter", version: "2.1",
              supportedDataType: lines}}
          - {{name: tidy, type: processChainAdapter, object: "{module}:second", dependsOn: [shape]}}
          - {{name: shape, type: processChainAdapter, object: "{module}:first"}}
        """))
    monkeypatch.setattr(pluginset, "_active",
                        pluginset.load_plugins(load_config(tmp_path, environ={})))
    ctx = ApiContext(open_registry(f"sqlite:///{tmp_path / 'steepy.db'}"))
    with TestClient(create_app(ctx)) as app:
        html = app.get("/plugins", headers=HTML).text
        assert "No plugins are added" not in html
        kinds = re.findall(r'<h2 id="kind-(\w+)">', html)
        assert kinds == ["outputAdapter", "processChainAdapter"]
        rows = {name: [re.sub(r"<[^>]+>", "", c).strip()
                       for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
                for name, row in re.findall(r'<tr data-plugin="([^"]+)">(.*?)</tr>', html, re.S)}
        assert rows["lines"][:4] == ["lines", "2.1", "lines", "—"]
        assert rows["tidy"][3] == "shape" and rows["shape"][3] == "—"
        assert rows["lines"][5] == "steepy.yaml" and rows["other"][5] == "builtin"

        one = app.get("/plugins/tidy", headers=HTML).text
        assert "<code>processChainAdapter</code>" in one
        assert '<a href="/plugins/shape" class="mono">shape</a>' in one
        assert app.get("/plugins/nope", headers=HTML).status_code == 404
        assert app.get("/plugins/lines").json()["version"] == "2.1"  # the API
