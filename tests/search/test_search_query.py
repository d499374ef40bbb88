"""Steep's query language: examples from Steep's documentation and UI, and properties of
the parser (hypothesis) and of the matcher's fragments."""

from __future__ import annotations

from datetime import date, datetime, time, timezone

import pytest
from hypothesis import given, settings, strategies as st

from steepy.search.matcher import _fold
from steepy.search import Locator, Operator, Query, SearchResult, Type, matches, parse_query
from steepy.search.query import (ATTRIBUTES, DateTerm, DateTimeRangeTerm, DateTimeTerm,
                                 StringTerm, is_separator)

UTC = timezone.utc
S = StringTerm
RC = Locator.REQUIRED_CAPABILITIES


@pytest.mark.parametrize(("text", "expected"), [
    ("filename highmemory", Query(terms=(S("filename"), S("highmemory")))),
    ('"exact match"', Query(terms=(S("exact match"),))),
    ("'it''s'", Query(terms=(S("'it''s'"),))),  # not one quoted string: a word
    (r'"say \"hi\" \\ \'x\'"', Query(terms=(S('say "hi" \\ \'x\''),))),
    ("filename is:workflow", Query(terms=(S("filename"),), types=(Type.WORKFLOW,))),
    ("error:127 IS:'ProcessChain'", Query(filters=((Locator.ERROR_MESSAGE, S("127")),),
                                          types=(Type.PROCESS_CHAIN,))),
    ("highmemory in:requiredcapabilities in:\"name\"",
     Query(terms=(S("highmemory"),), locators=(RC, Locator.NAME))),
    ("rcs:highmemory capability:gpu", Query(filters=((RC, S("highmemory")), (RC, S("gpu"))))),
    ('name:"a b" status:error', Query(filters=((Locator.NAME, S("a b")),
                                               (Locator.STATUS, S("error"))))),
    ("2022-05-20", Query(terms=(DateTerm(date(2022, 5, 20)),))),
    ("<2022-05-20T16:36", Query(terms=(
        DateTimeTerm(datetime(2022, 5, 20, 16, 36), seconds=False, operator=Operator.LT),))),
    ("start:>=2022-05-20T16:36:12", Query(filters=((Locator.START_TIME, DateTimeTerm(
        datetime(2022, 5, 20, 16, 36, 12), operator=Operator.GTE)),))),
    ("2022-05-19..2022-05-20T08:00", Query(terms=(DateTimeRangeTerm(
        date(2022, 5, 19), None, False, date(2022, 5, 20), time(8), False),))),
    # what is not an element is a term
    ("foo:bar is:running in:names name: x 2022-13-01 <x a..b", Query(terms=tuple(S(w) for w in (
        "foo:bar", "is:running", "in:names", "name:", "x", "2022-13-01", "<x", "a..b")))),
    ("  a\u00a0a  a ", Query(terms=(S("a"),))),
    ("", Query()),
])
def test_examples(text: str, expected: Query) -> None:
    assert parse_query(text) == expected


def test_dates_are_of_the_time_zone() -> None:
    from zoneinfo import ZoneInfo

    [day] = parse_query("2022-03-27", ZoneInfo("Europe/Berlin")).terms
    assert day.bounds() == (datetime(2022, 3, 26, 23, tzinfo=UTC),
                            datetime(2022, 3, 27, 22, tzinfo=UTC))  # a day of 23 hours
    [minute] = parse_query("2022-05-20T10:00", UTC).terms
    assert minute.bounds() == (datetime(2022, 5, 20, 10, tzinfo=UTC),
                               datetime(2022, 5, 20, 10, 1, tzinfo=UTC))
    assert str(minute) == "2022-05-20T10:00"


# -- properties
SEPARATORS = st.text(st.sampled_from(" \t\n\r\u2003\u3000"), min_size=1, max_size=3)
PLAIN = st.text(st.characters(codec="utf-8", exclude_characters="\"'<>:0123456789",
                              exclude_categories=("Zs", "Zl", "Zp", "Cc")),
                min_size=1, max_size=12)
PHRASE = st.text(st.characters(codec="utf-8", exclude_characters="\u00a0"), max_size=20)
DATES = st.dates(min_value=date(1000, 1, 1), max_value=date(9999, 12, 31))
TIMES = st.times().map(lambda t: t.replace(microsecond=0))
OPS = st.sampled_from(list(Operator))


def _case(word: str, upper: list[bool]) -> str:
    return "".join(c.upper() if u else c for c, u in zip(word, upper + [False] * len(word)))


@st.composite
def elements(draw, only_terms: bool = False) -> tuple[str, str, object]:
    """One element of a query: its text, what it is, and what it means."""
    kind = draw(st.sampled_from(["word", "phrase", "date", "datetime", "range"] + (
        [] if only_terms else ["filter", "locator", "type"])))
    if kind == "word":
        word = draw(PLAIN)
        return word, "term", S(word)
    if kind == "phrase":
        value = draw(PHRASE)
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        return f'"{escaped}"', "term", S(value)
    if kind in ("date", "datetime"):
        term = draw(_time_terms(kind))
        return str(term), "term", term
    if kind == "range":
        a, b = draw(DATES), draw(DATES)
        ta, tb = draw(st.none() | TIMES), draw(st.none() | TIMES)
        sa, sb = draw(st.booleans()) and ta is not None, draw(st.booleans()) and tb is not None
        if ta is not None and not sa:
            ta = ta.replace(second=0)
        if tb is not None and not sb:
            tb = tb.replace(second=0)
        term = DateTimeRangeTerm(a, ta, sa, b, tb, sb)
        return str(term), "term", term
    name = draw(st.sampled_from(sorted(ATTRIBUTES)))
    spelled = _case(name, draw(st.lists(st.booleans())))
    if kind == "filter":
        value_text, _, value = draw(elements(only_terms=True))
        return f"{spelled}:{value_text}", "filter", (ATTRIBUTES[name], value)
    if kind == "locator":
        quote = draw(st.sampled_from(["", '"', "'"]))
        return f"in:{quote}{spelled}{quote}", "locator", ATTRIBUTES[name]
    kind_of = draw(st.sampled_from(list(Type)))
    word = "workflow" if kind_of is Type.WORKFLOW else "processchain"
    return f"{_case('is:' + word, draw(st.lists(st.booleans())))}", "type", kind_of


@st.composite
def _time_terms(draw, kind: str):
    op = draw(OPS)
    if kind == "date":
        return DateTerm(draw(DATES), operator=op)
    seconds = draw(st.booleans())
    clock = draw(TIMES)
    if not seconds:
        clock = clock.replace(second=0)
    return DateTimeTerm(datetime.combine(draw(DATES), clock), seconds=seconds, operator=op)


@settings(max_examples=300)
@given(st.lists(elements(), max_size=8), st.lists(SEPARATORS, min_size=10, max_size=10),
       SEPARATORS | st.just(""), SEPARATORS | st.just(""))
def test_elements_parse_to_what_they_mean(parts, gaps, lead, trail) -> None:
    text = lead + "".join(p[0] + gaps[i] for i, p in enumerate(parts)).rstrip() + trail
    expected: dict[str, dict] = {"term": {}, "filter": {}, "locator": {}, "type": {}}
    for _, kind, meaning in parts:
        expected[kind].setdefault(meaning, None)
    assert parse_query(text) == Query(*(tuple(expected[k]) for k in
                                        ("term", "filter", "locator", "type")))


@given(st.text(max_size=60))
def test_every_text_is_a_query_of_its_words(text: str) -> None:
    query = parse_query(text)  # never an error: what is no element is a term
    if not any(q in text for q in "\"'"):  # no phrases: every term is one word of the text
        for term in query.terms:
            if isinstance(term, StringTerm):
                assert term.value and term.value in text.replace("\u00a0", " ")
                assert not any(is_separator(c) for c in term.value)


@given(st.text(st.characters(codec="utf-8"), min_size=1, max_size=300),
       st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=4))
def test_fragments_are_short_and_indices_point_at_the_terms(value: str, words) -> None:
    result = SearchResult(id="x", type=Type.WORKFLOW, status="RUNNING", name=value)
    query = Query(filters=tuple((Locator.NAME, S(w)) for w in dict.fromkeys(words)))
    found = matches(result, query)
    assert bool(found) == any(_fold(w) in _fold(value) for w in words)
    for match in found:
        inner = match.fragment.removeprefix("... ").removesuffix(" ...")
        assert inner in value
        if len(value) <= 100:
            assert inner == value.strip()
        for tm in match.term_matches:
            for i in tm.indices:
                assert _fold(match.fragment[i:i + len(tm.term)]) == _fold(tm.term)
