"""The window of chains in flight (generator/window.py) and what a for-each forgets of its
finished iterations: a for-each over many items holds and stores a bounded state."""

from __future__ import annotations

import json
from collections import deque

import pytest

from steepy.generator import ProcessChainGenerator, simulated_results
from steepy.model import Workflow
from steepy.model.ids import CounterIds
from tests.generator.test_generator import SERVICES, chain_json, execute


def fan_out(n: int) -> dict:
    return {"vars": [{"id": "items", "value": [f"f{i}" for i in range(n)]}],
            "actions": [{"type": "for", "id": "loop", "input": "items", "enumerator": "e",
                         "actions": [execute("s", "e", "y")]}]}


NESTED = {
    "vars": [{"id": "outer", "value": ["a", "b", "c"]}, {"id": "inner", "value": ["1", "2"]}],
    "actions": [
        {"type": "for", "id": "o", "input": "outer", "enumerator": "x", "output": "all",
         "yieldToOutput": "ys", "actions": [
             {"type": "for", "id": "i", "input": "inner", "enumerator": "z", "output": "ys",
              "yieldToOutput": "y2", "actions": [execute("s1", "x", "y1"),
                                                 execute("s2", "y1", "y2")]}]},
        execute("last", "all", "final", "join"),
    ],
}


def new(workflow: dict, window: int | None, ids: CounterIds | None = None
        ) -> ProcessChainGenerator:
    gen = ProcessChainGenerator(Workflow.from_json(workflow), "/tmp", "/out", SERVICES,
                                id_generator=ids or CounterIds())
    gen.window = window
    return gen


def drive(gen: ProcessChainGenerator, batch: int = 1, reload: bool = False,
          states: list[dict] | None = None) -> list[dict]:
    """Like the engine: end the oldest `batch` chains in flight per call; every chain made,
    in order. With `reload`, each call goes to a fresh generator loaded from the state."""
    made, flight = [], deque()
    results, executed, ended = {}, set(), []
    while True:
        if reload:
            fresh = new(json.loads(json.dumps(gen._workflow.to_json())), gen.window,
                        gen._next_id)
            fresh.load_state(json.loads(json.dumps(gen.persist_state())))
            gen = fresh
        chains = gen.generate(results, executed, ended_chains=ended)
        if states is not None:
            states.append(json.loads(json.dumps(gen.persist_state())))
        made += chain_json(chains)
        flight.extend(chains)
        if not flight:
            assert gen.is_finished()
            return made
        done = [flight.popleft() for _ in range(min(batch, len(flight)))]
        results, executed = simulated_results(done)
        ended = [c.id for c in done]


def test_a_window_makes_the_same_chains_a_few_at_a_time() -> None:
    first = new(fan_out(10), 4).generate()
    assert len(first) == 4  # no more than the window at once
    assert drive(new(fan_out(10), 4)) == drive(new(fan_out(10), None))


def test_the_window_is_refilled_when_half_of_it_has_ended() -> None:
    gen = new(fan_out(10), 4)
    chains = gen.generate()
    assert gen.generate(*simulated_results(chains[:1]), ended_chains=[chains[0].id]) == []
    refill = gen.generate(*simulated_results(chains[1:2]), ended_chains=[chains[1].id])
    assert len(refill) == 2  # 2 in flight: room for 2 more


def test_a_state_stored_in_the_window_goes_on_identically() -> None:
    assert drive(new(fan_out(9), 4), batch=3, reload=True) == drive(new(fan_out(9), None))
    assert drive(new(NESTED, 3), reload=True) == drive(new(NESTED, 3))


def _executables(chains: list[dict]) -> list[list[str]]:
    return sorted([e["id"] for e in c["executables"]] for c in chains)


def test_nested_for_eaches_and_their_outputs_are_the_same_in_a_window() -> None:
    # the same chains, in another order (so with other ids and paths)
    windowed, whole = drive(new(NESTED, 2)), drive(new(NESTED, None))
    assert _executables(windowed) == _executables(whole) and len(whole) == 7
    last = windowed[-1]["executables"][0]
    assert last["id"] == "last" and len(last["arguments"]) == 6 + 1  # six inputs, one output


def test_the_stored_state_holds_the_iterations_in_flight_not_all_of_them() -> None:
    states: list[dict] = []
    drive(new(fan_out(200), 10), batch=2, states=states)
    # the workflow's own values (the 200 items) are not stored: the workflow has them
    assert all("items" not in s["values"] for s in states)
    # each iteration's enumerator, output and executed action are forgotten once it is done
    assert max(len(s["values"]) for s in states) <= 2 * 10
    assert max(len(s["executed"]) for s in states) <= 10
    assert states[-1]["values"] == {} and states[-1]["executed"] == ["loop"]


def test_without_a_window_finished_iterations_are_forgotten_too() -> None:
    gen = new(fan_out(50), None)
    chains = gen.generate()
    gen.generate(*simulated_results(chains), ended_chains=[c.id for c in chains])
    state = gen.persist_state()
    assert gen.is_finished() and state["values"] == {} and state["executed"] == ["loop"]


def test_a_state_stored_before_iterations_were_forgotten_still_loads() -> None:
    gen = new(fan_out(6), None)
    chains = gen.generate()
    old = json.loads(json.dumps(gen.persist_state()))
    for loop in old["loops"]:
        del loop["names"]  # as stored by an earlier steepy
    del old["outstanding"]
    old["values"]["items"] = [f"f{i}" for i in range(6)]
    again = new(fan_out(6), None)
    again.load_state(old)
    again.generate(*simulated_results(chains), ended_chains=[c.id for c in chains])
    # it finishes; its loop had unrolled everything, so its names are unknown: kept, as before
    assert again.is_finished()
    assert again.persist_state()["executed"] == ["loop"] + [f"s${k}" for k in range(6)]


@pytest.mark.slow
def test_a_for_each_over_50000_items_stores_a_state_the_size_of_its_window() -> None:
    # (bench/throughput.py --memory 100000 1000000 measures the whole engine)
    gen = new(fan_out(50_000), 5_000)
    sizes, made, flight = [], 0, deque()
    results, executed, ended = {}, set(), []
    while True:
        chains = gen.generate(results, executed, ended_chains=ended)
        if chains:
            sizes.append(len(json.dumps(gen.persist_state())))
        made += len(chains)
        flight.extend(chains)
        if not flight:
            break
        done = [flight.popleft() for _ in range(min(2_500, len(flight)))]
        results, executed = simulated_results(done)
        ended = [c.id for c in done]
    assert made == 50_000 and gen.is_finished()
    assert len(sizes) >= 10 and max(sizes) < 500_000  # 2 MB and growing before
