"""`steepy search QUERY` and `steepy priority ID N` on the local database (in-process) and
through a server (`--server`, a real `steepy serve`): the API's answers, the same output
from both backends, and a finished item refused with the API's message."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from steepy.cli import main
from steepy.registry import open_registry
from tests.registry.test_search import fill_known

with warnings.catch_warnings():  # Starlette would like httpx2; httpx works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient


@pytest.fixture
def known(tmp_path: Path, monkeypatch) -> str:
    """A database with the registry tests' known submissions (w1 SUCCESS, w2 ERROR,
    w3 RUNNING) and chains (c1 SUCCESS, c2 ERROR, c3 REGISTERED); its URL."""
    monkeypatch.chdir(tmp_path)
    for key in ("STEEPY_SERVER", "STEEPY_DB_URL", "STEEPY_HTTP_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    url = f"sqlite:///{tmp_path / 'known.db'}"
    fill_known(open_registry(url)).close()
    return url


def steepy(*args: str, code: int = 0):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result


def test_search_prints_one_line_per_hit_with_where_it_matched(known: str) -> None:
    out = steepy("search", "filename", "highmemory", "--db", known).stdout.splitlines()
    assert [line.split()[:3] for line in out] == [
        ["workflow", "w1", "SUCCESS"], ["workflow", "w3", "RUNNING"], ["workflow", "w2", "ERROR"],
        ["processChain", "c2", "ERROR"], ["processChain", "c1", "SUCCESS"]]
    assert out[0] == ("workflow      w1  SUCCESS  Elvis filename  (name: Elvis filename; "
                      "requiredCapabilities: highmemory; source: actions: [filename, highmemory])")
    assert out[3] == "processChain  c2  ERROR  (requiredCapabilities: highmemory)"


def test_search_pages_and_says_how_to_see_more(known: str) -> None:
    first = steepy("search", "filename highmemory", "--size", "2", "--db", known)
    assert [line.split()[1] for line in first.stdout.splitlines()] == ["w1", "w3"]
    assert first.stderr == "(5 in all; --offset 2 for more)\n"
    rest = steepy("search", "filename highmemory", "--size", "2", "--offset", "4", "--db", known)
    assert [line.split()[1] for line in rest.stdout.splitlines()] == ["c1"]
    assert rest.stderr == ""
    none = steepy("search", "zebra", "--db", known)
    assert (none.stdout, none.stderr) == ("", "no hits\n")


def test_search_json_is_the_apis_answer(known: str, tmp_path: Path) -> None:
    from steepy.http import ApiContext, create_app

    local = json.loads(steepy("search", "error:127", "end:2022-05-21", "--json",
                              "--db", known).stdout)
    ctx = ApiContext(open_registry(known), log_dir=tmp_path / "logs")
    with TestClient(create_app(ctx)) as api:
        # dates in this machine's zone, as the local search reads them
        remote = api.get("/search", params={"q": "error:127 end:2022-05-21", "size": "20"}).json()
    assert local == remote and [r["id"] for r in local["results"]] == ["c2", "w2"]


def test_priority_of_active_items_and_refusal_of_finished_ones(known: str,
                                                               tmp_path: Path) -> None:
    from steepy.http import ApiContext, create_app

    assert steepy("priority", "w3", "7", "--db", known).stdout == (
        "submission w3: priority 7 (RUNNING)\n")
    assert steepy("priority", "c3", "-5", "--db", known).stdout == (
        "process chain c3: priority -5 (REGISTERED)\n")
    shown = json.loads(steepy("show", "w3", "--json", "--db", known).stdout)
    assert shown["priority"] == 7
    assert [c.get("priority", 0) for c in shown["processChains"]] == [-5]

    refused = steepy("priority", "w1", "3", "--db", known, code=2)
    assert refused.stderr == ("Cannot change priority of a finished submission\n"
                              "Its status is SUCCESS.\n")
    chain = steepy("priority", "c2", "3", "--db", known, code=2)
    assert chain.stderr == ("Cannot change priority of a finished process chain\n"
                            "Its status is ERROR.\n")
    ctx = ApiContext(open_registry(known), log_dir=tmp_path / "logs")
    with TestClient(create_app(ctx)) as api:  # the API refuses too, in Steep's words
        answer = api.put("/workflows/w1", json={"priority": 3})
    assert answer.status_code == 422
    assert answer.text.splitlines() == refused.stderr.splitlines()  # one text (review D3)
    missing = steepy("priority", "nosuch", "1", "--db", known, code=2)
    assert missing.stderr == "No submission or process chain with the id `nosuch'.\n"
    assert "not in the range" in steepy("priority", "w3", str(2**31), "--db", known,
                                        code=2).output


@pytest.mark.process
def test_search_and_priority_through_a_server_print_the_same(known: str,
                                                             tmp_path: Path) -> None:
    from tests.http.conftest import Server

    server = Server(tmp_path, "--no-agents", env={"STEEPY_DB_URL": known})
    try:
        for args in (("search", "filename highmemory", "--size", "2"),
                     ("search", "error:127 end:2022-05-21", "--json"),
                     ("search", "zebra"),
                     ("priority", "w1", "3"), ("priority", "c2", "3"),
                     ("priority", "nosuch", "3"),
                     ("priority", "w3", "9"), ("priority", "c3", "4")):
            code = 2 if args[0] == "priority" and args[1] in ("w1", "c2", "nosuch") else 0
            remote = steepy(*args, "--server", server.url, code=code)
            local = steepy(*args, "--db", known, code=code)
            assert (remote.stdout, remote.stderr) == (local.stdout, local.stderr), args
        assert server.http.get("/workflows/w3").json()["priority"] == 9
    finally:
        assert server.stop() == 0


def test_a_page_of_no_hits_or_before_the_first_is_refused(known: str) -> None:
    """`--size 0' said `no hits' where there were hits; negative sizes and offsets were taken
    (a review of the management commands): each is an option problem, exit 2."""
    for command in (["search", "filename"], ["list"]):
        for option, value in (("--size", "0"), ("--size", "-1"), ("--offset", "-1")):
            refused = steepy(*command, option, value, "--db", known, code=2)
            assert f"Invalid value for '{option}'" in refused.stderr, refused.stderr


def test_events_of_a_chain_names_its_submission(known: str) -> None:
    said = steepy("events", "c1", "--db", known, code=2).stderr
    assert said.startswith("`c1' is a process chain, not a submission; its submission is w1")
