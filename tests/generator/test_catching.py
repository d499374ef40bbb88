"""The workflow's catch and fallbacks with `stop: true' in the generator (generator/catching.py):
which executables get them."""

from __future__ import annotations

import json

from steepy.generator import ProcessChainGenerator
from steepy.model import Workflow
from tests.generator.test_generator import SERVICES, execute, param, service
from tests.generator.test_generator import generator as made

NOTE = service("note", param("i", "input"), param("o", "output", "0..1"))
ALL = {**SERVICES, "note": NOTE}
CATCH = {"service": "note", "inputs": [{"id": "i", "value": "/notes"}]}


def generator(data: dict) -> ProcessChainGenerator:
    return made(data, ALL)


def workflow(catch: dict | None = None, **more) -> dict:
    out = {"api": "4.7.0", "vars": [{"id": "in", "value": "x"}], "actions": [
        execute("a", "in", "va"), execute("b", "in", "vb"), execute("c", "in", "vc")], **more}
    if catch is not None:
        out["catch"] = catch
    return out


def exes(chains) -> list[list[tuple]]:
    return [[(e.id, e.fallback_for, e.stops) for e in c.executables] for c in chains]


def reloaded(gen: ProcessChainGenerator) -> ProcessChainGenerator:
    fresh = ProcessChainGenerator(Workflow.from_json(json.loads(json.dumps(
        gen._workflow.to_json()))), "/tmp", "/out", ALL, id_generator=gen._next_id)
    fresh.load_state(json.loads(json.dumps(gen.persist_state())))
    return fresh


def test_the_catch_follows_every_action_it_covers_and_stops():
    gen = generator(workflow({**CATCH, "forActions": ["a", "c"]}))
    chains = gen.generate()
    assert exes(chains) == [[("a", None, False), ("a.catch", "a", True)],
                            [("b", None, False)],
                            [("c", None, False), ("c.catch", "c", True)]]
    catch = chains[0].executables[1]
    assert [(x.id, x.variable.value) for x in catch.arguments] == [("i", "/notes")]


def test_an_own_fallback_wins_and_one_that_stops_need_not_bind_the_outputs():
    own = {"service": "note", "stop": True, "inputs": [{"id": "i", "value": "/x"}],
           "outputs": [{"id": "o", "var": "spare"}]}
    data = workflow(CATCH)
    data["actions"][0]["fallback"] = own
    gen = generator(data)
    first = gen.generate()[0]
    assert exes([first]) == [[("a", None, False), ("a.fallback", "a", True)]]
    written = [x.variable.value for x in first.executables[1].arguments if x.type == "output"]
    assert written and written[0].startswith("/tmp/")  # a path of its own, not the action's


def test_max_recoveries_does_not_take_the_catch_from_any_chain():
    """Every chain gets the catch: its runs are counted by the engine, in the database,
    right before it would start (agent/recovery.py), not by handing out places to chains."""
    gen = generator(workflow({**CATCH, "maxRecoveries": 1}))
    chains = gen.generate()
    assert [len(c.executables) for c in chains] == [2, 2, 2]
    assert "recoveries" not in reloaded(gen).persist_state()
