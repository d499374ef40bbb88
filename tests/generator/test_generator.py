"""The process chain generator beyond Steep's fixtures: errors, state, ids, simulation."""

from __future__ import annotations

import json
import re

import pytest

from steepy.generator import (GeneratorError, ProcessChainGenerator, common_directory,
                              normalize_path, simulate, simulated_results)
from steepy.model.ids import CounterIds
from steepy.documents.macros import MacroError
from steepy.model import Macro, ProcessChain, Service, Workflow


def param(pid: str, kind: str, cardinality: str = "1..1", **extra) -> dict:
    return {"id": pid, "name": pid, "description": pid, "type": kind,
            "cardinality": cardinality, **extra}


def service(sid: str, *params: dict, **extra) -> Service:
    return Service.from_json({"id": sid, "name": sid, "description": sid, "path": f"{sid}.sh",
                              "runtime": "other", "parameters": list(params), **extra})


CP = service("cp", param("i", "input"), param("o", "output"))
JOIN = service("join", param("i", "input", "1..n"), param("o", "output"))
SERVICES = {s.id: s for s in (CP, JOIN)}


def execute(aid: str, inp: str, out: str, service_id: str = "cp", **extra) -> dict:
    return {"id": aid, "type": "execute", "service": service_id,
            "inputs": [{"id": "i", "var": inp}], "outputs": [{"id": "o", "var": out}], **extra}


def generator(workflow: dict, services=None, **kwargs) -> ProcessChainGenerator:
    kwargs.setdefault("id_generator", CounterIds())
    return ProcessChainGenerator(Workflow.from_json(workflow), "/tmp", "/out",
                                 services or SERVICES, **kwargs)


def chain_json(chains: list[ProcessChain]) -> list[dict]:
    return [c.to_json() for c in chains]


def run_all(gen: ProcessChainGenerator, persist: bool = False) -> list[list[dict]]:
    """Drive a generator to the end with simulated results (optionally reloading its state
    into a fresh generator before every call)."""
    steps = []
    results: dict = {}
    executed: set = set()
    while True:
        if persist:
            state = json.loads(json.dumps(gen.persist_state()))
            fresh = ProcessChainGenerator(gen._workflow, "/tmp", "/out", SERVICES,
                                          id_generator=gen._next_id)
            fresh.load_state(state)
            gen = fresh
        chains = gen.generate(results, executed)
        if not chains:
            return steps
        steps.append(chain_json(chains))
        results, executed = simulated_results(chains)


LOOP_WORKFLOW = {
    "vars": [{"id": "items", "value": ["a", "b", "c"]}],
    "actions": [
        {"type": "for", "id": "loop", "input": "items", "enumerator": "e", "output": "all",
         "yieldToOutput": "y2", "actions": [execute("s1", "e", "y1"), execute("s2", "y1", "y2")]},
        execute("last", "all", "final", "join"),
    ],
}


@pytest.mark.parametrize("yielded", ["copy", "nothing"], ids=["an-output", "a-constant"])
@pytest.mark.parametrize("persist", [False, True], ids=["fresh", "reloaded"])
def test_a_for_each_without_an_output_that_yields_runs_to_its_end(yielded, persist) -> None:
    """`yieldToOutput' without `output' (valid: nothing collects what is yielded): the loop
    ended with its last action, and the yield that came after found it gone (a KeyError that
    stopped the engine, the submission RUNNING)."""
    workflow = {"vars": [{"id": "items", "value": ["a", "b"]}, {"id": "nothing", "value": []}],
                "actions": [{"type": "for", "id": "loop", "input": "items", "enumerator": "e",
                             "yieldToOutput": yielded,
                             "actions": [execute("c", "e", "copy")]},
                            execute("after", "items", "done", "join", dependsOn=["loop"])]}
    gen = generator(workflow)
    steps = run_all(gen, persist=persist)
    ran = [e["serviceId"] for step in steps for chain in step for e in chain["executables"]]
    assert ran == ["cp", "cp", "join"]


# -- errors ------------------------------------------------------------------------------------


def test_unknown_service_is_named() -> None:
    gen = generator({"vars": [{"id": "x", "value": 1}],
                     "actions": [execute("a", "x", "y", "nope")]})
    with pytest.raises(GeneratorError, match="nope") as info:
        gen.generate()
    assert "`a'" in str(info.value)


def test_cardinality_error_names_action_and_parameter() -> None:
    gen = generator({"vars": [{"id": "x", "value": ["1", "2"]}],
                     "actions": [execute("a", "x", "y")]})
    with pytest.raises(GeneratorError) as info:
        gen.generate()
    message = str(info.value)
    assert "cardinality" in message and "`a'" in message and "`i'" in message


def test_a_cardinality_error_names_the_variable_that_gave_too_few_values() -> None:
    """A for-each whose item is an empty list: the action (its id made up by steepy, with
    the iteration's suffix) is hard to find; the enumerator is the workflow's own name."""
    gen = generator({"vars": [{"id": "lists", "value": [["a"], []]}],
                     "actions": [{"type": "for", "id": "loop", "input": "lists",
                                  "enumerator": "l", "actions": [execute("c", "l", "y")]}]})
    with pytest.raises(GeneratorError) as info:
        gen.generate()
    assert "got 0 from variable `l' (a for-each's item), but its cardinality is 1..1" in str(
        info.value)
    plain = generator({"vars": [{"id": "x", "value": ["1", "2"]}],
                       "actions": [execute("a", "x", "y")]})
    with pytest.raises(GeneratorError, match=r"got 2 from variable `x', but"):
        plain.generate()


def test_missing_required_input_without_default_is_a_cardinality_error() -> None:
    gen = generator({"actions": [{"id": "a", "type": "execute", "service": "cp",
                                  "outputs": [{"id": "o", "var": "y"}]}]})
    with pytest.raises(GeneratorError, match="cardinality"):
        gen.generate()


def test_an_empty_list_given_to_a_parameter_with_a_default_gets_the_default() -> None:
    """As Steep's actionToExecutable: a 1..1 input with a default that ends up with no
    argument (a variable holding an empty list) gets the default, under a fresh id, as if
    it had not been given (a cardinality error before)."""
    flagged = service("flagged", param("n", "input", default=True, dataType="boolean", label="-n"),
                      param("i", "input"), param("o", "output"))
    gen = generator({"vars": [{"id": "in", "value": "a.txt"}, {"id": "empty", "value": []}],
                     "actions": [{"id": "a", "type": "execute", "service": "flagged",
                                  "inputs": [{"id": "n", "var": "empty"}, {"id": "i", "var": "in"}],
                                  "outputs": [{"id": "o", "var": "y"}]}]},
                    services={"flagged": flagged})
    [chain] = gen.generate()
    [n] = [a for a in chain.executables[0].arguments if a.id == "n"]
    assert (n.label, n.variable.value, n.data_type) == ("-n", "true", "boolean")
    assert n.variable.id not in ("empty", "in", "y")  # a fresh id


def test_missing_macro_is_reported() -> None:
    with pytest.raises(MacroError, match="Unable to find macro"):
        generator({"actions": [{"id": "inc", "type": "include", "macro": "m"}]})


# -- arguments, paths, policies ---------------------------------------------------------------


def test_arguments_defaults_labels_runtime_args_and_policies() -> None:
    svc = service(
        "tool", param("flag", "input", dataType="boolean", default=True, label="-f"),
        param("opt", "input", "0..1", default="unused"), param("files", "input", "1..n"),
        param("out", "output", fileSuffix=".txt", label="-o"),
        runtimeArgs=[{"id": "mount", "name": "m", "description": "", "label": "-v",
                      "value": "/d:/d"}],
        requiredCapabilities=["docker", "gpu"],
        retries={"maxAttempts": 3}, maxRuntime="1m", deadline="1h")
    other = service("other", param("i", "input"), requiredCapabilities=["gpu", "big"])
    workflow = {
        "priority": 5, "retries": {"processChains": {"maxAttempts": 2}},
        "vars": [{"id": "lists", "value": [["a", "b"], ["c"]]}],
        "actions": [
            {"id": "t", "type": "execute", "service": "tool",
             "inputs": [{"id": "files", "var": "lists"}],
             "outputs": [{"id": "out", "var": "r", "prefix": "sub/"}],
             "retries": {"maxAttempts": 9}, "maxRuntime": "2m"},
            {"id": "u", "type": "execute", "service": "other", "inputs": [{"id": "i", "var": "r"}]},
        ]}
    gen = generator(workflow, {"tool": svc, "other": other})
    gen.default_priority = 7
    [chain] = gen.generate()
    data = chain.to_json()
    tool = data["executables"][0]
    assert [(a["id"], a.get("label"), a["variable"]["id"], a["variable"]["value"])
            for a in tool["arguments"]] == [
        ("flag", "-f", "0", "true"), ("files", None, "lists", "a"),
        ("files", None, "lists", "b"), ("files", None, "lists", "c"),
        ("out", "-o", "r", "/tmp/sub/1.txt")]
    assert tool["runtimeArgs"] == [{"id": "2", "label": "-v",
                                    "variable": {"id": "mount", "value": "/d:/d"},
                                    "type": "input", "dataType": "string"}]
    # action retries replace the service's; each timeout independently action, else service
    assert tool["retries"] == {"maxAttempts": 9}
    assert tool["maxRuntime"] == {"timeout": 120000}
    assert tool["deadline"] == {"timeout": 3600000}
    assert data["executables"][1]["arguments"][0]["variable"] == {"id": "r",
                                                                  "value": "/tmp/sub/1.txt"}
    assert data["id"] == "3"
    assert data["requiredCapabilities"] == ["big", "docker", "gpu"]
    assert data["priority"] == 7 and data["retries"] == {"maxAttempts": 2}


def test_output_paths() -> None:
    gen = ProcessChainGenerator(Workflow.from_json({
        "vars": [{"id": "x", "value": "in"}],
        "actions": [
            {"id": "a", "type": "execute", "service": "cp", "inputs": [{"id": "i", "var": "x"}],
             "outputs": [{"id": "o", "var": "p1", "store": True}]},
            {"id": "b", "type": "execute", "service": "cp", "inputs": [{"id": "i", "var": "x"}],
             "outputs": [{"id": "o", "var": "p2", "prefix": "/abs//dir/../x-"}]},
            {"id": "c", "type": "execute", "service": "cp", "inputs": [{"id": "i", "var": "x"}],
             "outputs": [{"id": "o", "var": "p3", "prefix": "./rel/"}]}]}),
        "/tmp/sub/", "/out/sub", SERVICES, id_generator=CounterIds())
    values = [c.executables[0].arguments[1].variable.value for c in gen.generate()]
    assert values == ["/out/sub/0", "/abs/x-2", "/tmp/sub/rel/4"]


def test_path_helpers() -> None:
    assert normalize_path("//tmp//a/./b/../c") == "/tmp/a/c"
    assert common_directory(["/tmp/0/1.txt", "/tmp/0/sub/2.txt"]) == "/tmp/0"
    assert common_directory(["/a/1", "/b/2"]) == "/"
    assert common_directory(["rel/x"]) == "rel"


def test_directory_input_from_results_is_the_common_parent_directory() -> None:
    dir_in = service("dirin", param("d", "input", dataType="directory"), param("o", "output"))
    gen = generator({"vars": [{"id": "x", "value": "lit/dir"}, {"id": "files"}],
                     "actions": [{"id": "a", "type": "execute", "service": "dirin",
                                  "inputs": [{"id": "d", "var": "files"}],
                                  "outputs": [{"id": "o", "var": "y"}]},
                                 {"id": "b", "type": "execute", "service": "dirin",
                                  "inputs": [{"id": "d", "var": "x"}],
                                  "outputs": [{"id": "o", "var": "z"}]}]},
                    {"dirin": dir_in})
    [literal] = gen.generate()
    assert literal.executables[0].arguments[0].variable.value == "lit/dir"
    [chain] = gen.generate({"files": ["/tmp/9/a/1.txt", "/tmp/9/2.txt"]})
    assert chain.executables[0].arguments[0].variable.value == "/tmp/9"
    assert chain.executables[0].arguments[0].data_type == "directory"


# -- ids and state -------------------------------------------------------------------------------


def test_production_ids_are_unique_and_used_for_files() -> None:
    gen = ProcessChainGenerator(Workflow.from_json(LOOP_WORKFLOW), "/tmp", "/out", SERVICES)
    chains = gen.generate()
    ids = [c.id for c in chains]
    files = [a.variable.value for c in chains for e in c.executables for a in e.arguments
             if a.type == "output"]
    assert len(chains) == 3 and len(set(ids)) == 3
    assert all(re.fullmatch(r"[2-7a-z]{20}", i) for i in ids)
    assert all(re.fullmatch(r"/tmp/[2-7a-z]{20}", f) for f in files)


def test_state_round_trip_after_every_call_gives_the_same_chains() -> None:
    plain = run_all(generator(LOOP_WORKFLOW))
    resumed = run_all(generator(LOOP_WORKFLOW), persist=True)
    assert plain == resumed
    assert [len(s) for s in plain] == [3, 1]


def test_state_loaded_mid_for_each_continues_identically() -> None:
    workflow = {
        "vars": [{"id": "items", "value": ["a", "b"]}],
        "actions": [{"type": "for", "id": "loop", "input": "items", "enumerator": "e",
                     "yieldToInput": "y", "output": "all", "yieldToOutput": "y",
                     "actions": [execute("s", "e", "y")]},
                    execute("j", "all", "z", "join")]}
    first = generator(workflow, id_generator=CounterIds())
    step0 = first.generate()
    assert [c.executables[0].id for c in step0] == ["s$0", "s$1"]
    step1 = first.generate({"y$0": ["n1"]})  # one result in: one more iteration at once
    assert [c.executables[0].arguments[0].variable.value for c in step1] == ["n1"]
    state = json.loads(json.dumps(first.persist_state()))

    second = generator(workflow, id_generator=CounterIds(start=6))
    second.load_state(state)
    feed = [({"y$1": []}, "s$2"), ({"y$2": ["n2"]}, None)]
    for results, _ in feed:
        assert chain_json(first.generate(results)) == chain_json(second.generate(results))
    last_a = first.generate({"y$3": []})
    last_b = second.generate({"y$3": []})
    assert chain_json(last_a) == chain_json(last_b)
    [join] = last_a
    assert [a.variable.value for a in join.executables[0].arguments[:-1]] == ["n1", "n2"]
    assert first.is_finished() and second.is_finished()


def test_persisted_state_is_plain_json_and_independent_of_later_calls() -> None:
    gen = generator(LOOP_WORKFLOW)
    gen.generate()
    state = gen.persist_state()
    text = json.dumps(state)
    gen.generate({"y2$0": ["r0"], "y2$1": ["r1"], "y2$2": ["r2"]})
    assert json.dumps(state) == text


# -- behaviour -------------------------------------------------------------------------------


def test_for_each_over_a_running_for_each_streams_its_items() -> None:
    workflow = {
        "vars": [{"id": "items", "value": ["a", "b"]}],
        "actions": [
            {"type": "for", "id": "f1", "input": "items", "enumerator": "e", "output": "mid",
             "yieldToOutput": "y", "actions": [execute("s", "e", "y")]},
            {"type": "for", "id": "f2", "input": "mid", "enumerator": "g",
             "actions": [execute("t", "g", "z")]},
            execute("after", "items", "w", "join", dependsOn=["f2"])]}
    gen = generator(workflow)
    assert len(gen.generate()) == 2
    [early] = gen.generate({"y$0": ["r0"]})
    assert early.executables[0].id == "t$0"
    [late] = gen.generate({"y$1": ["r1"]})
    assert late.executables[0].id == "t$1"
    assert gen.generate({}, {"t$0"}) == []  # f2 is executed only when both copies are
    [after] = gen.generate({}, {"t$1"})
    assert after.executables[0].id == "after"
    assert gen.is_finished()


def test_consistency_checker_sees_the_action_and_the_chain_so_far() -> None:
    seen = []

    def checker(executables, action) -> bool:
        seen.append(([e.id for e in executables], action.id, action.service))
        return True

    gen = generator({"vars": [{"id": "x", "value": "v"}],
                     "actions": [execute("a", "x", "y"), execute("b", "y", "z")]},
                    consistency_checker=checker)
    [chain] = gen.generate()
    assert [e.id for e in chain.executables] == ["a", "b"]
    assert seen == [([], "a", "cp"), (["a"], "b", "cp")]


def test_output_adapter_ends_the_chain() -> None:
    custom = service("cpc", param("i", "input"), param("o", "output", dataType="custom"))
    gen = generator({"vars": [{"id": "x", "value": "v"}],
                     "actions": [execute("a", "x", "y", "cpc"), execute("b", "y", "z")]},
                    {"cpc": custom, "cp": CP}, output_adapters=["custom"])
    assert [len(c.executables) for c in gen.generate()] == [1]


def test_fork_with_dominating_successor_stays_in_one_chain() -> None:
    # a -> b, and c needs both a's and b's outputs: b dominates c, so all three chain up
    gen = generator({"vars": [{"id": "x", "value": "v"}],
                     "actions": [execute("a", "x", "y"), execute("b", "y", "z"),
                                 {"id": "c", "type": "execute", "service": "join",
                                  "inputs": [{"id": "i", "var": "y"}, {"id": "i", "var": "z"}],
                                  "outputs": [{"id": "o", "var": "w"}]}]})
    [chain] = gen.generate()
    assert [e.id for e in chain.executables] == ["a", "b", "c"]


def test_include_is_expanded_before_generating() -> None:
    macro = Macro.from_json({"id": "m", "name": "m", "description": "",
                             "parameters": [{"id": "i", "name": "", "description": "",
                                             "type": "input", "default": "d.txt"},
                                            {"id": "o", "name": "", "description": "",
                                             "type": "output"}],
                             "actions": [execute("inner", "i", "o")]})
    gen = ProcessChainGenerator(
        Workflow.from_json({"actions": [{"id": "inc", "type": "include", "macro": "m",
                                         "outputs": [{"id": "o", "var": "r"}]},
                                        execute("after", "r", "s")]}),
        "/tmp", "/out", SERVICES, {"m": macro}, id_generator=CounterIds())
    [chain] = gen.generate()
    assert [e.id for e in chain.executables] == ["$inc$m$inner", "after"]
    assert chain.executables[0].arguments[0].variable.to_json() == {
        "id": "$inc$m$i$default", "value": "d.txt"}


# -- simulation --------------------------------------------------------------------------------


def test_simulate_runs_a_workflow_to_the_end() -> None:
    steps = simulate(Workflow.from_json(LOOP_WORKFLOW), SERVICES, None, "/tmp", "/out",
                     id_generator=CounterIds())
    assert steps.finished
    assert [[c.executables[-1].id for c in step] for step in steps] == [
        ["s2$0", "s2$1", "s2$2"], ["last"]]
    join_args = steps[1][0].executables[0].arguments
    assert [a.variable.value for a in join_args if a.type == "input"] == [
        "/tmp/1", "/tmp/4", "/tmp/7"]


def test_simulate_stops_recursive_loops_and_feeds_directories() -> None:
    split = service("split", param("i", "input"), param("o", "output", dataType="directory"))
    merge = service("merge", param("d", "input", dataType="directory"), param("o", "output"))
    workflow = Workflow.from_json({
        "vars": [{"id": "items", "value": ["a"]}],
        "actions": [
            {"type": "for", "id": "loop", "input": "items", "enumerator": "e",
             "yieldToInput": "y", "actions": [execute("s", "e", "y")]},
            {"id": "sp", "type": "execute", "service": "split",
             "inputs": [{"id": "i", "var": "items"}],
             "outputs": [{"id": "o", "var": "dir"}]},
            {"type": "for", "id": "each", "input": "dir", "enumerator": "f",
             "actions": [{"id": "m", "type": "execute", "service": "merge",
                          "inputs": [{"id": "d", "var": "dir"}],
                          "outputs": [{"id": "o", "var": "out"}]}]}]})
    steps = simulate(workflow, {"cp": CP, "split": split, "merge": merge}, None, "/tmp", "/out",
                     id_generator=CounterIds())
    assert steps.finished
    ids = [[e.id for c in step for e in c.executables] for step in steps]
    assert ids == [["sp", "s$0"], ["s$1", "m$0"]]  # iterations are appended after `sp'

    merge_arg = steps[1][1].executables[0].arguments[0]
    assert merge_arg.variable.value == "/tmp/0"  # the directory, not the file inside it


def test_simulate_reports_unfinished_workflows() -> None:
    steps = simulate(Workflow.from_json({"actions": [execute("a", "never", "y")]}), SERVICES,
                     None, "/tmp", "/out", id_generator=CounterIds())
    assert list(steps) == [] and not steps.finished


def test_state_of_an_unknown_version_is_refused() -> None:
    gen = generator(LOOP_WORKFLOW)
    state = gen.persist_state()
    state["version"] = 99
    with pytest.raises(GeneratorError, match="version 99"):
        generator(LOOP_WORKFLOW).load_state(state)


def test_an_actions_cache_reaches_its_executables_also_after_a_reload() -> None:
    """`cache: false` of an action inside a for-each (extensions 15) is on each iteration's
    executable, also when the generator state was stored and read again in between."""
    workflow = {"vars": [{"id": "items", "value": ["a", "b"]}], "actions": [{
        "type": "for", "input": "items", "enumerator": "i",
        "actions": [execute("s", "i", "o", cache=False)]}]}
    steps = run_all(generator(workflow), persist=True)
    assert [e["cache"] for step in steps for c in step for e in c["executables"]] == [
        False, False]


def test_values_earlier_chains_reported_are_marked_and_given_ones_are_not() -> None:
    """A for-each's output (in the order its iterations ended) is marked `reported`, so a
    reuse key takes it in any order; a list the workflow gives is not: its order counts."""
    gen = generator({"vars": [*LOOP_WORKFLOW["vars"], {"id": "given", "value": ["x", "y"]}],
                     "actions": [*LOOP_WORKFLOW["actions"],
                                 execute("direct", "given", "other", "join")]})
    chains, results, executed = [], {}, set()
    while True:
        new = gen.generate(results, executed)
        if not new:
            break
        chains += new
        results, executed = simulated_results(new)
    inputs = {c.executables[0].id: [a for a in c.executables[0].arguments if a.type == "input"]
              for c in chains}
    last = next(args for exe_id, args in inputs.items() if exe_id.startswith("last"))
    direct = next(args for exe_id, args in inputs.items() if exe_id.startswith("direct"))
    assert len(last) == 3 and all(a.reported for a in last)
    assert [a.variable.value for a in direct] == ["x", "y"] and not any(a.reported
                                                                        for a in direct)


def test_numbers_become_arguments_as_steep_writes_them() -> None:
    """Steep passes a value's toString() of what Jackson read: a fraction is a Java Double
    (`1.0E-4', `2.0E7'), an object of a runtime argument compact JSON; Python's text of them
    (`0.0001', `20000000.0', `{"a": 1}') made other arguments than Steep's."""
    tool = service("tool", param("x", "input", "1..n"), param("d", "input", default=1e-5),
                   runtimeArgs=[{"id": "env", "name": "env", "description": "e",
                                 "value": [{"name": "A", "value": "1"}]},
                                {"id": "cpus", "name": "cpus", "description": "c",
                                 "value": 0.0001}],
                   environment={"RATE": 0.0001})
    workflow = {"api": "4.7.0", "vars": [{"id": "x", "value": [0.0001, 2e7, 1.0, 0.5, 3]}],
                "actions": [{"id": "t", "type": "execute", "service": "tool",
                             "inputs": [{"id": "x", "var": "x"}]}]}
    [chain] = generator(workflow, {"tool": tool}).generate()
    [exe] = chain.executables
    assert [a.variable.value for a in exe.arguments] == ["1.0E-4", "2.0E7", "1.0", "0.5", "3",
                                                         "1.0E-5"]
    # a runtime argument and the environment are strings in Steep: their text as written
    assert [a.variable.value for a in exe.runtime_args] == ['[{"name":"A","value":"1"}]',
                                                            "0.0001"]
    assert exe.environment == {"RATE": "0.0001"}
