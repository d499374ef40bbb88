"""`steepy plan --resume`'s verdicts (steepy.engine.reuseplan) on a real registry and real
files: a chain like an earlier one is reused; otherwise the reason names what changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from steepy.engine.fingerprints import Fingerprints
from steepy.engine.reuse import Reuse
from steepy.engine.reuseplan import ReusePlan
from steepy.model import Submission, Workflow
from steepy.model.processchain import Argument, ArgumentVariable, Executable, ProcessChain
from steepy.model.service import Service
from steepy.registry import Registry, open_registry
from steepy.registry.cache import CacheWrite
from steepy.registry.writes import RoundWrite

SERVICE = Service.from_json({"id": "cp", "name": "Copy", "description": "copies", "path": "cp",
                             "runtime": "other", "parameters": []})


def _chain(chain_id: str, source: Path, target: Path, cache: str | None = None,
           flag: str = "-p") -> ProcessChain:
    return ProcessChain(chain_id, [Executable("copy", "cp", "cp", [
        Argument("flag", ArgumentVariable("f", flag), "input"),
        Argument("in", ArgumentVariable("i", str(source)), "input"),
        Argument("out", ArgumentVariable("o", str(target)), "output")], cache=cache)])


@pytest.fixture
def earlier(tmp_path: Path) -> tuple[Registry, Path]:
    """A registry where chain c1 copied in.txt to out1.txt and succeeded."""
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    source, target = tmp_path / "in.txt", tmp_path / "out1.txt"
    source.write_text("hello\n")
    target.write_text("hello\n")
    chain = _chain("c1", source, target)
    write = Reuse(registry.cache, {"cp": SERVICE}).round(
        RoundWrite(1, chains=[chain], save_state=True, state={}), [], resume=True)
    registry.requests.add_submission(Submission(id="s1", workflow=Workflow(name="s1")))
    registry.submissions.controller_round("s1", write)
    registry.submissions.controller_round("s1", RoundWrite(2, fed=["c1"], cache=CacheWrite(
        completed=[("c1", [[{"path": str(target), "results": [str(target)],
                             "fingerprint": Fingerprints()(str(target), False)}]])])))
    return registry, tmp_path


def _verdicts(registry: Registry, *chains: ProcessChain) -> list:
    return ReusePlan(Reuse(registry.cache, {"cp": SERVICE})).step(list(chains))


def test_an_unchanged_chain_is_reused_from_the_earlier_one(earlier) -> None:
    registry, here = earlier
    (verdict,) = _verdicts(registry, _chain("c2", here / "in.txt", here / "out2.txt"))
    assert verdict.reused.marker() == {"submissionId": "s1", "processChainId": "c1"}
    assert verdict.chain.executables[0].arguments[2].variable.value == str(here / "out1.txt")
    assert [e.chain_id for e in registry.cache.entries("s1")] == ["c1"]  # nothing stored


def test_each_other_chain_says_why_it_runs(earlier) -> None:
    registry, here = earlier
    off, other = (_chain("c3", here / "in.txt", here / "out3.txt", cache="false"),
                  _chain("c4", here / "in.txt", here / "out4.txt", flag="-a"))
    verdicts = _verdicts(registry, off, other)
    assert [v.reasons for v in verdicts] == [
        ("its action or service says `cache: false'",),
        ("cp: no earlier run with this service, these arguments and this environment",)]

    (here / "in.txt").write_text("hello, changed\n")
    (changed,) = _verdicts(registry, _chain("c5", here / "in.txt", here / "out5.txt"))
    assert changed.reasons == (f"cp: input `in' changed: {here / 'in.txt'}",)

    (here / "in.txt").write_text("hello\n")  # as before, but a newer modification time
    (here / "out1.txt").unlink()
    plan = ReusePlan(Reuse(registry.cache, {"cp": SERVICE}))
    (gone,) = plan.step([_chain("c6", here / "in.txt", here / "out6.txt")])
    assert "cp: input `in' changed" in gone.reasons[0]
    (below,) = plan.step([_chain("c7", here / "out6.txt", here / "out7.txt")])
    assert below.reasons == ("cp: input `in' is written by a chain that runs",)


def test_outputs_gone_since_the_earlier_run_are_named(earlier) -> None:
    registry, here = earlier
    (here / "out1.txt").unlink()
    (verdict,) = _verdicts(registry, _chain("c2", here / "in.txt", here / "out2.txt"))
    assert verdict.reasons == (
        f"the outputs of its earlier run are gone or changed: {here / 'out1.txt'}",)
    assert [e.chain_id for e in registry.cache.entries("s1")] == ["c1"]  # not forgotten


def test_a_tool_given_by_its_path_is_named_among_what_may_have_changed(earlier) -> None:
    registry, here = earlier
    tool = here / "tool.sh"
    tool.write_text("#!/bin/sh\n")
    chain = _chain("c8", here / "in.txt", here / "out8.txt")
    chain.executables[0].path = str(tool)  # (edited since: nothing ran with this content)
    (verdict,) = _verdicts(registry, chain)
    assert verdict.reasons == ("cp: no earlier run with this service, these arguments, this "
                               f"environment and this content of its tool {tool}",)
