"""Steep's search over a registry of known submissions and chains, on SQLite and PostgreSQL:
terms, locators, types, filters, dates in time zones, ranking and paging."""

from __future__ import annotations

from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import insert, update

from steepy.model import ProcessChain, Submission, Workflow
from steepy.registry import Registry, open_registry
from steepy.registry.interfaces import Search
from steepy.registry.search import SqlSearch
from steepy.registry.tables import process_chains, runs, submissions
from steepy.search import Locator, Type, matches, parse_query
from tests.registry.chains import store_chains
from tests.registry.test_interfaces import _public

UTC = timezone.utc


def _t(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


SUBMISSIONS = [  # id, name, source, capabilities, status, start, end, error
    ("w1", "Elvis filename", "actions: [filename, highmemory]", ["highmemory"], "SUCCESS",
     "2022-05-20T10:00:00", "2022-05-20T11:00:00", None),
    ("w2", "Other 50% done", "nothing here", [], "ERROR",
     "2022-05-21T09:00:00", None, "exit code 127 in filename"),
    ("w3", "FileName again", None, ["gpu"], "RUNNING", "2022-05-22T00:00:30", None, None),
]
CHAINS = [  # id, submission, capabilities, status, runs (start, end, error)
    ("c1", "w1", ["highmemory"], "SUCCESS", [("2022-05-20T10:05:00", "2022-05-20T10:30:00", None)]),
    ("c2", "w2", ["gpu", "highmemory"], "ERROR",
     [("2022-05-21T09:01:00", "2022-05-21T09:02:00", "first failure"),
      ("2022-05-21T09:10:00", "2022-05-21T09:11:00", "exit code 127")]),
    ("c3", "w3", [], "REGISTERED", []),
]


def fill_known(registry: Registry) -> Registry:
    """The known submissions and chains above, stored in `registry`."""
    for sid, name, source, caps, status, start, end, error in SUBMISSIONS:
        registry.requests.add_submission(Submission(
            id=sid, workflow=Workflow(name=name), name=name, source=source,
            required_capabilities=caps))
        with registry.db.write() as conn:
            conn.execute(update(submissions).where(submissions.c.id == sid).values(
                status=status, start_time=_t(start), end_time=end and _t(end),
                error_message=error))
    for cid, sid, caps, status, chain_runs in CHAINS:
        store_chains(registry, sid, [ProcessChain(id=cid, required_capabilities=caps)])
        with registry.db.write() as conn:
            conn.execute(update(process_chains).where(process_chains.c.id == cid).values(
                status=status))
            for number, (start, end, error) in enumerate(chain_runs, 1):
                conn.execute(insert(runs).values(
                    chain_id=cid, run_number=number, start_time=_t(start), end_time=_t(end),
                    status="ERROR" if error else "SUCCESS", error_message=error))
    return registry


@pytest.fixture
def registry(database_url: str) -> Registry:
    return fill_known(open_registry(database_url))


def _ids(registry: Registry, text: str, zone=UTC, **paging) -> list[str]:
    return [r.id for r in registry.search.search(parse_query(text, zone), **paging)]


def test_the_implementation_is_exactly_its_interface() -> None:
    assert _public(SqlSearch) == _public(Search)


def test_terms_search_every_attribute_newest_first(registry: Registry) -> None:
    assert _ids(registry, "filename") == ["w3", "w2", "w1"]  # name, error message, name+source
    assert _ids(registry, "FILENAME") == ["w3", "w2", "w1"]
    assert _ids(registry, "zebra") == []
    assert _ids(registry, '"50% done"') == ["w2"]
    assert _ids(registry, "%") == ["w2"]  # LIKE's wildcards are plain characters
    assert _ids(registry, "_") == []


def test_rank_is_the_number_of_terms_matched_then_workflows_first(registry: Registry) -> None:
    assert _ids(registry, "filename highmemory") == ["w1", "w3", "w2", "c2", "c1"]
    assert _ids(registry, "highmemory gpu") == ["c2", "w3", "w1", "c1"]


def test_types_and_locators(registry: Registry) -> None:
    assert _ids(registry, "highmemory is:processchain") == ["c2", "c1"]
    assert _ids(registry, "highmemory is:workflow") == ["w1"]
    assert _ids(registry, "filename in:name") == ["w3", "w1"]
    assert _ids(registry, "filename in:source in:error") == ["w2", "w1"]
    # the source names highmemory too, but only capabilities are searched
    assert _ids(registry, "high in:rcs is:workflow") == ["w1"]
    assert _ids(registry, "is:workflow") == []  # nothing to look for


def test_filters(registry: Registry) -> None:
    assert _ids(registry, "rcs:gpu") == ["w3", "c2"]
    assert _ids(registry, "error:127 is:processchain") == ["c2"]
    assert _ids(registry, "error:first") == []  # a chain's error is its latest run's
    assert _ids(registry, "status:error") == ["w2", "c2"]
    assert _ids(registry, "status:succ") == ["w1", "c1"]
    assert _ids(registry, "status:registered") == ["c3"]
    assert _ids(registry, "filename status:error") == ["w2"]  # a filter must hold
    assert _ids(registry, "filename name:again") == ["w3"]
    # without terms, each filter counts once (Steep)
    assert _ids(registry, "rcs:gpu rcs:high") == ["c2", "w3", "w1", "c1"]  # c2 has both
    assert _ids(registry, "rcs:gpu status:error") == ["c2", "w3", "w2"]
    assert _ids(registry, "id:c") == ["c3", "c2", "c1"]
    # capabilities are compared one by one, not as the stored JSON text
    assert _ids(registry, 'rcs:"," rcs:[ rcs:\'"\'') == []


def test_status_words_name_the_first_status_containing_them(registry: Registry) -> None:
    # as in Steep, a word that names no status is no condition at all
    assert _ids(registry, "filename status:nosuch") == ["w3", "w2", "w1"]
    assert _ids(registry, "status:nosuch") == []


def test_dates_times_and_ranges(registry: Registry) -> None:
    assert _ids(registry, "2022-05-20") == ["w1", "c1"]
    assert _ids(registry, "start:<2022-05-21") == ["w1", "c1"]
    assert _ids(registry, "start:<=2022-05-21T09:00 is:workflow") == ["w2", "w1"]
    assert _ids(registry, "start:>=2022-05-21T09:00") == ["w3", "w2", "c2"]
    assert _ids(registry, "start:>2022-05-21T09:00") == ["w3", "c2"]
    assert _ids(registry, "start:2022-05-21T09:10:00") == ["c2"]
    assert _ids(registry, "end:2022-05-21T09:11") == ["c2"]
    assert _ids(registry, "2022-05-21..2022-05-22") == ["w3", "w2", "c2"]
    assert _ids(registry, "start:2022-05-20T10:00..2022-05-20T10:05") == ["w1", "c1"]
    assert _ids(registry, "start:2022-05-20T10:00..2022-05-20T10:04:59") == ["w1"]


def test_dates_are_days_of_the_time_zone(registry: Registry) -> None:
    berlin, new_york = ZoneInfo("Europe/Berlin"), ZoneInfo("America/New_York")
    assert _ids(registry, "start:2022-05-22", berlin) == ["w3"]
    assert _ids(registry, "start:2022-05-22", new_york) == []
    assert _ids(registry, "start:2022-05-21", new_york) == ["w3", "w2", "c2"]


def test_paging(registry: Registry) -> None:
    assert _ids(registry, "filename", size=1, offset=1) == ["w2"]
    assert _ids(registry, "filename", size=2, offset=-5) == ["w3", "w2"]
    assert _ids(registry, "filename highmemory", size=-1, offset=3) == ["c2", "c1"]
    assert _ids(registry, "filename", size=0) == []


def test_counts_per_type(registry: Registry) -> None:
    search = registry.search

    def counts(text: str) -> tuple[int, int]:
        query = parse_query(text, UTC)
        return search.count(query, Type.WORKFLOW), search.count(query, Type.PROCESS_CHAIN)

    assert counts("filename") == (3, 0)
    assert counts("filename highmemory") == (3, 2)
    assert counts("rcs:gpu status:error") == (2, 1)
    assert counts("filename status:error") == (1, 0)
    assert counts("") == (0, 0)


def test_results_carry_what_the_matcher_needs(registry: Registry) -> None:
    query = parse_query("filename highmemory", UTC)
    first = registry.search.search(query, size=1)[0]
    assert (first.id, first.type, first.status, first.name) == (
        "w1", Type.WORKFLOW, "SUCCESS", "Elvis filename")
    assert first.required_capabilities == ["highmemory"]
    assert first.start_time == _t("2022-05-20T10:00:00")
    found = {(m.locator, m.fragment): [(t.term, t.indices) for t in m.term_matches]
             for m in matches(first, query)}
    assert found == {
        (Locator.NAME, "Elvis filename"): [("filename", [6])],
        (Locator.REQUIRED_CAPABILITIES, "highmemory"): [("highmemory", [0])],
        (Locator.SOURCE, "actions: [filename, highmemory]"): [("filename", [10]),
                                                             ("highmemory", [20])],
    }
    chain = registry.search.search(parse_query("error:127", UTC), size=-1)
    assert [(r.id, r.error_message, r.end_time) for r in chain] == [
        ("w2", "exit code 127 in filename", None),
        ("c2", "exit code 127", _t("2022-05-21T09:11:00"))]
