"""The editor's fields for workflow variables: one per variable with a default value (none for
those actions write), a resubmission's filled with the values given to it, and submitting
sends the filled ones as the API's `vars` (JSON values as such, other text as strings)."""

from __future__ import annotations

import json
import re
import urllib.parse
import warnings

import pytest

with warnings.catch_warnings():  # Starlette would like httpx2; httpx works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from steepy.documents.loading import parse_text
from steepy.documents.submissions import submission_from
from steepy.documents.variables import GivenVars
from steepy.http import ApiContext, create_app
from steepy.model.service import Service
from steepy.registry import open_registry
from steepy.ui.pages.editor import variables
from tests.ui.test_site import HTML

WORKFLOW = """\
api: 4.7.0
name: with variables
vars:
  - id: seconds
    value: 0
  - id: label
    value: a <nap>
  - id: written
actions:
  - type: execute
    service: sleep
    inputs:
      - id: seconds
        var: seconds
"""
FIELD = re.compile(r'<input type="text" data-var="([^"]+)" name="[^"]+" value="([^"]*)"\s+'
                   r'placeholder="([^"]*)"')


def test_fields_of_the_variables_with_a_default_value() -> None:
    assert variables(WORKFLOW, {"seconds": 0.5}) == [
        {"id": "seconds", "default": "0", "given": "0.5"},
        {"id": "label", "default": "a <nap>", "given": ""}]
    assert variables("api: [", None) == []  # no workflow: no fields


@pytest.mark.parametrize("value, shown", [
    ("3", '"3"'), ("true", '"true"'), ("null", '"null"'), ("[1]", '"[1]"'), ('"q"', '"\\"q\\""'),
    ("", '""'), ("  ", '"  "'), ("plain text", "plain text"), ("été", "été"), (3, "3"),
    (True, "true"), ([1, "a"], '[1, "a"]')])
def test_a_given_value_is_shown_as_the_script_sends_it_back(value, shown) -> None:
    """Review (session 49): the script reads a field as JSON when it is JSON, so a string
    given as "3" was shown as 3 and resubmitted as the number 3 ("true", "null", "[1]" as a
    boolean, a null, a list), and an empty string as an empty field, which is not sent: the
    default ran instead. What is shown reads back as the value given."""
    (field,) = variables("api: 4.7.0\nvars: [{id: v, value: x}]\nactions: []\n", {"v": value})
    assert field["given"] == shown
    read = json.loads(shown) if shown.strip() and _is_json(shown) else shown
    assert read == value


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


@pytest.fixture
def app(tmp_path):
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    sleep = Service.from_json({"id": "sleep", "name": "Sleep", "description": "", "path": "sleep",
                               "runtime": "other", "parameters": [
                                   {"id": "seconds", "name": "", "description": "",
                                    "type": "input", "cardinality": "1..1"}]})
    stored = submission_from(parse_text(WORKFLOW, "<request>"), {"sleep": sleep}, {}, None,
                             GivenVars.of({"label": "short"}))
    registry.requests.add_submission(stored)
    with TestClient(create_app(ApiContext(registry, log_dir=tmp_path / "logs"))) as client:
        yield client, stored.id


def test_a_resubmission_starts_with_the_values_given(app) -> None:
    client, submission_id = app
    assert client.get(f"/workflows/{submission_id}").json()["vars"] == {"label": "short"}
    page = client.get(f"/new/workflow?from={submission_id}", headers=HTML).text
    assert FIELD.findall(page) == [("seconds", "", "0"), ("label", "short", "a &lt;nap&gt;")]
    assert "Variables" in page and 'data-var="written"' not in page
    fresh = client.get("/new/workflow", headers=HTML).text  # the example has none: hidden
    assert 'data-testid="editor-vars" hidden>' in fresh and "data-var=" not in fresh
    shown = client.get(f"/workflows/{submission_id}", headers=HTML).text  # the workflow page
    assert '<dd data-testid="vars"><code>label="short"</code> </dd>' in shown


def test_the_fields_of_a_text_are_what_the_script_shows_as_it_changes(app) -> None:
    """Review (session 49): the fields came only with the page, so a workflow typed or
    pasted had none, and a variable renamed kept its old field (filled: a 400)."""
    client, _ = app
    answer = client.post("/new/workflow/variables", content=WORKFLOW)
    assert answer.status_code == 200
    assert answer.json() == [{"id": "seconds", "default": "0"},
                             {"id": "label", "default": "a <nap>"}]
    assert answer.headers["cache-control"] == "no-store"
    assert client.post("/new/workflow/variables", content="api: [").json() is None  # mid-edit
    assert client.post("/new/workflow/variables", content="actions: []\n").json() == []
    for typed in ("vars: 5", "vars: true", '{"vars": 3}', "vars: {a: 1}"):  # (a 500 before)
        assert client.post("/new/workflow/variables", content=typed).json() == [], typed


def test_typing_a_workflow_makes_its_fields(ui, browser_page) -> None:
    from playwright.sync_api import expect

    page = browser_page
    page.goto(f"{ui.url}/new/workflow")
    fields = page.get_by_test_id("editor-vars")
    expect(fields).to_be_hidden()  # the example has no variables
    area = page.get_by_label(re.compile("^Workflow"))
    area.fill(WORKFLOW)
    expect(page.locator("[data-var]")).to_have_count(2)
    expect(fields).to_be_visible()
    label = page.locator('[data-var="label"]')
    expect(label).to_have_attribute("placeholder", "a <nap>")
    label.fill("typed")
    renamed = WORKFLOW.replace("\n  - id: seconds\n", "\n  - id: pause\n").replace(
        "var: seconds", "var: pause")
    area.fill(renamed)
    expect(page.locator('[data-var="pause"]')).to_have_count(1)
    expect(page.locator('[data-var="seconds"]')).to_have_count(0)
    expect(label).to_have_value("typed")  # a field that stays keeps what was typed
    area.fill(renamed + "  - [")  # not readable for a while: the fields stay
    page.wait_for_timeout(800)
    expect(page.locator("[data-var]")).to_have_count(2)
    area.fill(renamed)
    page.get_by_role("button", name="Submit").click()
    page.wait_for_url(re.compile(r"/workflows/[a-z0-9]+$"))
    submitted = page.url.rsplit("/", 1)[1]
    assert ui.http.get(f"/workflows/{submitted}").json()["vars"] == {"label": "typed"}
    assert ui.wait(submitted)["status"] == "SUCCESS"


def test_submitting_sends_the_fields_filled_in(ui, browser_page) -> None:
    from playwright.sync_api import expect

    answer = ui.http.post("/workflows?" + urllib.parse.urlencode(
        {"vars": json.dumps({"label": "first"})}), content=WORKFLOW)
    assert answer.status_code == 202, answer.text
    first = answer.json()["id"]
    page = browser_page
    page.goto(f"{ui.url}/new/workflow?from={first}")
    label = page.locator('[data-var="label"]')
    expect(label).to_have_value("first")
    label.fill("second")
    page.locator('[data-var="seconds"]').fill("0.05")
    page.get_by_role("button", name="Submit").click()
    page.wait_for_url(re.compile(r"/workflows/(?!" + first + ")[a-z0-9]+$"))
    again = page.url.rsplit("/", 1)[1]
    assert ui.http.get(f"/workflows/{again}").json()["vars"] == {"label": "second",
                                                                "seconds": 0.05}
    assert ui.wait(again)["status"] == "SUCCESS"


COUNT = """\
api: 4.7.0
name: counts
vars:
  - id: text
    value: words.txt
actions:
  - type: execute
    service: wc
    inputs:
      - id: file
        var: text
      - id: other
        value: other.txt
"""


def test_a_resubmission_of_relative_paths_names_the_files_it_ran_with(tmp_path,
                                                                      monkeypatch) -> None:
    """A workflow submitted from a folder had its relative paths resolved against that
    folder; the server would resolve its text against its own: the resubmission starts with
    the workflow as it ran (and the values given, as they ran), and says why."""
    from pathlib import Path

    from steepy.documents.inputfiles import InputBase

    submitted_from, elsewhere = tmp_path / "project", tmp_path / "server"
    submitted_from.mkdir()
    elsewhere.mkdir()
    for name in ("words.txt", "mine.txt", "other.txt"):
        (submitted_from / name).write_text(name)
        (elsewhere / name).write_text("the server's " + name)
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    wc = Service.from_json({"id": "wc", "name": "wc", "description": "", "path": "wc",
                            "runtime": "other", "parameters": [
                                {"id": p, "name": "", "description": "", "type": "input",
                                 "cardinality": "1..1", "dataType": "file"}
                                for p in ("file", "other")]})
    stored = submission_from(parse_text(COUNT, "count.yaml"), {"wc": wc}, {}, None,
                             GivenVars.of({"text": "mine.txt"}),
                             InputBase(submitted_from, "the directory it was submitted from"))
    registry.requests.add_submission(stored)
    monkeypatch.chdir(elsewhere)
    with TestClient(create_app(ApiContext(registry, services={"wc": wc},
                                          log_dir=tmp_path / "logs"))) as client:
        page = client.get(f"/new/workflow?from={stored.id}", headers=HTML).text
        assert 'data-testid="editor-remark"' in page and "resolved against" in page
        text = re.search(r'<textarea id="editor-text"[^>]*>(.*?)</textarea>', page, re.S)
        assert text is not None
        shown = json.loads(text.group(1).replace("&#34;", '"').replace("&quot;", '"'))
        mine = str(submitted_from / "mine.txt")
        assert FIELD.findall(page) == [("text", mine, mine)]
        again = client.post(f"/workflows?vars={urllib.parse.quote(json.dumps({'text': mine}))}",
                            content=json.dumps(shown))
        assert again.status_code == 202, again.text
        ran = again.json()["workflow"]
        values = [i.get("value") for a in ran["actions"] for i in a["inputs"]]
        assert ran["vars"][0]["value"] == mine
        assert str(submitted_from / "other.txt") in values
        assert not any(str(v).startswith(str(elsewhere)) for v in values)
    registry.close()
    assert Path(mine).read_text() == "mine.txt"
