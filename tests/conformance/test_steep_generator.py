"""Replay Steep's process-chain generator cases (README: "Replaying a generator case").

Every entry of every `generator-cases*.yaml` in the conformance directory is replayed in each
of its modes (persistState x perResult, all four unless the entry lists `modes`), with one
shared counter id generator per replay, generator state round-tripped through JSON text, and
exact comparison of the chains in Steep's normalised JSON form.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from steepy.errors import SteepyError
from steepy.generator import ProcessChainGenerator
from steepy.model.ids import CounterIds
from steepy.model import Macro, ProcessChain, Service, Workflow
from tests.conftest import conformance_dir

try:  # the validator is optional here: replay without it if it is not there
    from steepy.documents.validation import validate_workflow
except ImportError:  # pragma: no cover
    validate_workflow = None

ALL_MODES = [{"persistState": p, "perResult": r} for p in (False, True) for r in (False, True)]
TMP_PATH = "/tmp/"
OUT_PATH = "/out/"


def _load(path: Path):
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def _fixture(name: str):
    return _load(conformance_dir() / "fixtures" / f"{name}.yaml")


def _cases() -> list:
    params = []
    for path in sorted(conformance_dir().glob("generator-cases*.yaml")):
        for index, entry in enumerate(_load(path) or []):
            for mode in entry.get("modes") or ALL_MODES:
                name = (f"{path.stem}[{index}]:{entry['workflow']}->{entry['result']}:"
                        f"persist={mode['persistState']},perResult={mode['perResult']}")
                params.append(pytest.param(entry, mode, id=name))
    return params


def _services() -> dict[str, Service]:
    services = _load(conformance_dir() / "services.yaml")
    return {s.id: s for s in (Service.from_json(d) for d in services)}


def _macros() -> dict[str, Macro]:
    macros = [Macro.from_json(_fixture(name)) for name in ("validMacro", "validMacro2")]
    return {m.id: m for m in macros}


def _consistency_checker(entry: dict):
    spec = entry.get("consistency_checker")
    behaviour = (spec or {}).get("behaviour", "accept-all")
    if behaviour == "accept-all":
        return None if spec is None else (lambda executables, action: True)
    if behaviour == "reject-all":
        return lambda executables, action: False
    if behaviour == "reject-when":
        rule = spec["reject_when"]

        def check(executables, action) -> bool:
            non_empty = bool(executables) if rule.get("chain_non_empty") else True
            return not (action.id == rule["action_id"] and non_empty)
        return check
    raise AssertionError(f"unknown consistency checker behaviour {behaviour!r}")


def _normalised(chains: list) -> list[dict]:
    """Chains in Steep's written form: defaults filled in, scalars as strings."""
    return [(c if isinstance(c, ProcessChain) else ProcessChain.from_json(c)).to_json()
            for c in chains]


class Replay:
    """One replay of one entry in one mode."""

    def __init__(self, entry: dict, mode: dict):
        self.entry = entry
        self.persist = mode["persistState"]
        self.per_result = mode["perResult"]
        self.workflow = Workflow.from_json(_fixture(entry["workflow"]))
        self.services = _services()
        self.macros = _macros()
        self.ids = CounterIds()  # shared by every generator of this replay, never reset
        self.state: dict | None = None

    def new_generator(self) -> ProcessChainGenerator:
        adapters = [a["supportedDataType"] for a in self.entry.get("output_adapters") or []]
        return ProcessChainGenerator(self.workflow, TMP_PATH, OUT_PATH, self.services,
                                     self.macros,
                                     consistency_checker=_consistency_checker(self.entry),
                                     output_adapters=adapters, id_generator=self.ids)

    def resumed(self, generator: ProcessChainGenerator) -> ProcessChainGenerator:
        if not self.persist:
            return generator
        fresh = self.new_generator()
        fresh.load_state(json.loads(json.dumps(self.state)))
        return fresh

    def save(self, generator: ProcessChainGenerator) -> None:
        if self.persist:
            self.state = generator.persist_state()

    def run_steps(self) -> tuple[ProcessChainGenerator, dict, set]:
        steps = _fixture(self.entry["result"] + "_result") or []
        generator = self.new_generator()
        assert not generator.is_finished()
        self.save(generator)
        results: dict = {}
        executed: set = set()
        for number, step in enumerate(steps):
            generator = self.resumed(generator)
            if self.per_result and results:
                actual = []
                for var, values in results.items():
                    actual += generator.generate({var: values}, set(executed))
            else:
                actual = generator.generate(results, set(executed))
            assert _normalised(actual) == _normalised(step.get("chains") or []), \
                f"step {number}: chains differ"
            results = step.get("results") or {}
            executed = set(step.get("executedExecutableIds") or [])
            self.save(generator)
        return self.resumed(generator), results, executed


@pytest.mark.parametrize("entry,mode", _cases())
def test_generator_case(entry: dict, mode: dict) -> None:
    replay = Replay(entry, mode)
    if validate_workflow is not None:
        problems = validate_workflow(replay.workflow, replay.macros)
        assert not problems, [str(p) for p in problems]

    generator, results, executed = replay.run_steps()
    if entry.get("expect_error"):
        with pytest.raises(SteepyError) as info:
            generator.generate(results, executed)
        assert entry["expect_error"]["message_contains"] in str(info.value)
        return
    assert generator.generate(results, executed) == []
    assert generator.is_finished() == entry.get("expect_finished", True)
