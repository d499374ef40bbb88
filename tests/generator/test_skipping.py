"""Skipping what depends on a chain that stopped without an error (generator/skipping.py)."""

from __future__ import annotations

import json

from steepy.generator import ProcessChainGenerator, Stop
from tests.generator.test_generator import SERVICES, execute, generator, param, service

GATHER = service("gather", param("i", "input", "0..n"), param("o", "output"))


def ids(chains) -> list[list[str]]:
    return [[e.id for e in c.executables] for c in chains]


def reloaded(gen: ProcessChainGenerator) -> ProcessChainGenerator:
    fresh = ProcessChainGenerator(gen._workflow, "/tmp", "/out", {**SERVICES, "gather": GATHER},
                                  id_generator=gen._next_id)
    fresh.load_state(json.loads(json.dumps(gen.persist_state())))
    return fresh


# a -> b -> c in one chain; d needs a's output too (a fork after a); e stands alone
FORK = {"api": "4.7.0", "vars": [{"id": "in", "value": "x"}], "actions": [
    execute("a", "in", "va"), execute("b", "va", "vb"), execute("c", "vb", "vc"),
    execute("d", "va", "vd"), execute("e", "in", "ve"),
    {"id": "f", "type": "execute", "service": "cp", "dependsOn": ["d"],
     "inputs": [{"id": "i", "var": "in"}], "outputs": [{"id": "o", "var": "vf"}]}]}


def test_a_stop_skips_every_dependent_by_variable_and_by_depends_on():
    gen = generator(FORK)
    assert ids(gen.generate()) == [["a"], ["e"]]
    chains = gen.generate({}, set(), [Stop(("a",), ("va",), "was pruned")])
    assert chains == [] and gen.is_finished()
    skipped = gen.take_skipped()
    assert skipped == {  # a ran: it stopped, it is not skipped (review finding 10)
        "b": "needs variable `va', which will not get a value",
        "d": "needs variable `va', which will not get a value",
        "c": "needs variable `vb', which will not get a value",
        "f": "needs `d', which was skipped"}
    assert gen.take_skipped() == {}  # handed out once
    assert gen.skipped() == skipped  # and kept


def test_a_stop_inside_a_chain_skips_the_rest_of_it_and_spares_the_others():
    gen = generator(FORK)
    gen.generate()
    chains = gen.generate({"va": ["/tmp/va"]}, {"a"})
    assert ids(chains) == [["b", "c"], ["d", "f"]]
    # b stopped its chain: c (after it in the chain) was not run either
    gen.generate({}, set(), [Stop(("b", "c"), ("vb", "vc"), "was pruned: nothing to do")])
    assert gen.take_skipped() == {
        "c": "needs `b', which ended its chain early (was pruned: nothing to do)"}
    assert gen.is_finished()  # nothing left to make: d, f and e run in their chains


def test_what_is_dead_survives_the_stored_state_and_reaches_later_iterations():
    workflow = {"api": "4.7.0", "vars": [{"id": "in", "value": "x"},
                                         {"id": "items", "value": ["1", "2"]}],
                "actions": [
                    execute("a", "in", "va"),
                    {"id": "loop", "type": "for", "input": "items", "enumerator": "i",
                     "output": "outs", "yieldToOutput": "y",
                     "actions": [execute("body", "va", "y")]},
                    execute("join", "outs", "vj", "gather")]}
    gen = generator(workflow, {**SERVICES, "gather": GATHER})
    assert ids(gen.generate()) == [["a"]]  # the for-each unrolled; its bodies wait for va
    gen = reloaded(gen)
    chains = gen.generate({}, set(), [Stop(("a",), ("va",), "was pruned")])
    # the for-each ended without its skipped iterations: its output is empty, join runs
    assert ids(chains) == [["join"]] and gen.is_finished()
    gen = reloaded(gen)
    skipped = gen.skipped()
    assert set(skipped) == {"body$0", "body$1"}, skipped
    assert gen.skipped()["body$0"] == "needs variable `va', which will not get a value"


def test_iterations_made_after_a_stop_are_skipped_when_they_need_what_it_left_out():
    workflow = {"api": "4.7.0", "vars": [{"id": "in", "value": "x"}], "actions": [
        execute("a", "in", "va"), execute("mk", "in", "items"),
        {"id": "loop", "type": "for", "input": "items", "enumerator": "i",
         "actions": [execute("body", "va", "y"), execute("own", "i", "z")]}]}
    gen = generator(workflow)
    assert ids(gen.generate()) == [["a"], ["mk"]]
    gen = reloaded(gen)
    assert gen.generate({}, set(), [Stop(("a",), ("va",), "was pruned")]) == []
    gen = reloaded(gen)
    chains = gen.generate({"items": [["1", "2"]]}, {"mk"})
    assert ids(chains) == [["own$0"], ["own$1"]]  # what needs only the item still runs
    assert set(gen.take_skipped()) == {"body$0", "body$1"} and gen.is_finished()


def test_a_consumer_of_a_for_each_whose_every_iteration_stopped_runs_with_an_empty_list():
    """Review S4: each iteration's action ran and stopped its chain. What it would have
    yielded is left out, so the for-each's output is empty, as after a for-each over no
    items, and what reads it runs; only what reads a stopped action's own outputs is
    skipped."""
    workflow = {"api": "4.7.0", "vars": [{"id": "items", "value": ["1", "2"]}], "actions": [
        {"id": "loop", "type": "for", "input": "items", "enumerator": "i",
         "output": "outs", "yieldToOutput": "y",
         "actions": [execute("body", "i", "y"), execute("after", "y", "z")]},
        execute("join", "outs", "vj", "gather")]}
    gen = generator(workflow, {**SERVICES, "gather": GATHER})
    assert ids(gen.generate()) == [["body$0", "after$0"], ["body$1", "after$1"]]
    gen = reloaded(gen)
    chains = gen.generate({}, set(), [Stop((f"body${k}", f"after${k}"), (f"y${k}", f"z${k}"),
                                           "the tool pruned its chain") for k in (0, 1)])
    assert ids(chains) == [["join"]] and gen.is_finished()
    (join,) = chains
    assert [a.type for a in join.executables[0].arguments] == ["output"]  # no items
    assert gen.take_skipped() == {
        f"after${k}": f"needs `body${k}', which ended its chain early (the tool pruned its "
                      "chain)" for k in (0, 1)}
