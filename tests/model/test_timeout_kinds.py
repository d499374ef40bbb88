"""One enum for the kinds of timeout (steepy/model/timeouts.py): its names in every vocabulary,
and no other module spelling one of them itself."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from steepy.model.common import POLICY_FIELDS
from steepy.model.policies import RetryPolicy, TimeoutKind, TimeoutPolicy
from steepy.model.processchain import Executable

STEEPY = Path(__file__).resolve().parents[2] / "steepy"
HOME = STEEPY / "model" / "timeouts.py"
# every name of every kind, in every vocabulary
NAMES = {name for kind in TimeoutKind for name in (kind.value, kind.words, kind.attribute)}


def test_every_vocabulary_of_a_kind() -> None:
    runtime = TimeoutKind.MAX_RUNTIME
    assert (runtime.value, runtime.words, runtime.attribute) == (
        "maxRuntime", "maximum runtime", "max_runtime")
    assert TimeoutKind("maxInactivity").words == "maximum inactivity"
    assert TimeoutKind.from_words("maximum inactivity") is TimeoutKind.MAX_INACTIVITY
    assert TimeoutKind.from_words("deadline") is TimeoutKind.DEADLINE
    assert TimeoutKind.from_words(None) is None and TimeoutKind.from_words("soon") is None
    # written as its Steep name: JSON, f-strings, comparisons with what files say
    assert json.dumps({"k": runtime}) == '{"k": "maxRuntime"}' and f"{runtime}" == "maxRuntime"
    assert [k for k in TimeoutKind if k.retryable] == [TimeoutKind.MAX_INACTIVITY,
                                                       TimeoutKind.MAX_RUNTIME]
    # ties go from the outside in: the deadline, then one attempt, then the wait for a line
    assert sorted(TimeoutKind, key=lambda k: k.rank) == [
        TimeoutKind.DEADLINE, TimeoutKind.MAX_RUNTIME, TimeoutKind.MAX_INACTIVITY]


def test_the_policy_of_a_kind_and_the_json_keys() -> None:
    exe = Executable("e", "/bin/true", "s", [], max_runtime=TimeoutPolicy(5),
                     deadline=TimeoutPolicy(9, True))
    assert [k.policy(exe) for k in TimeoutKind] == [None, TimeoutPolicy(5), TimeoutPolicy(9, True)]
    assert POLICY_FIELDS[1:] == tuple((k.value, k.attribute) for k in TimeoutKind)


def test_retry_conditions_read_and_write_kinds() -> None:
    policy = RetryPolicy.from_json({"retryOn": {"timeouts": ["maxRuntime"]}})
    assert policy.retry_on is not None and policy.retry_on.timeouts == [TimeoutKind.MAX_RUNTIME]
    assert type(policy.to_json()["retryOn"]["timeouts"][0]) is str  # YAML-safe
    assert policy.should_retry(None, [], TimeoutKind.MAX_RUNTIME)[0]
    assert policy.should_retry(None, [], TimeoutKind.DEADLINE) == (
        False, "a deadline timeout is never retried")


def _docstrings(tree: ast.AST) -> set[int]:
    bodies = [n.body for n in ast.walk(tree) if isinstance(
        n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))]
    return {id(b[0].value) for b in bodies
            if b and isinstance(b[0], ast.Expr) and isinstance(b[0].value, ast.Constant)}


def test_every_use_goes_through_the_enum() -> None:
    """No module but the enum's own spells a kind's name as a string of its own (prose that
    mentions one is fine), and no template lists one."""
    spelled = []
    for path in sorted(STEEPY.rglob("*.py")):
        if path == HOME:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        spelled += [f"{path.relative_to(STEEPY)}:{node.lineno}: {node.value!r}"
                    for node in ast.walk(tree)
                    if isinstance(node, ast.Constant) and node.value in NAMES
                    and id(node) not in docs]
    quoted = re.compile("[\"'](" + "|".join(sorted(NAMES - {"deadline"})) + ")[\"']")
    for path in sorted((STEEPY / "ui").rglob("*")):
        if path.suffix in (".html", ".js") and quoted.search(path.read_text(encoding="utf-8")):
            spelled.append(str(path.relative_to(STEEPY)))
    assert spelled == []
