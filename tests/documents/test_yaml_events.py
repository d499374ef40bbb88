"""The YAML reader builds data and positions from the parser's events (no node tree). It
must give exactly what the reader that composed a node tree first gave: the same data, the
same positions (in the same order), the same problems at the same places. That reader is
kept below as the reference, and both read every YAML file of the repository, the YAML
examples of the docs, the shared conformance cases and generated texts full of anchors,
aliases, merge keys, odd keys and tags."""

from __future__ import annotations

import glob
import json
import random
import re
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from steepy.documents import yamlbuilder
from steepy.documents.yamlreader import _yaml_error, check_aliases, parse_yaml_all
from steepy.errors import InputError, Problem

ROOT = Path(__file__).resolve().parents[2]
MAX_NODES = yamlbuilder.MAX_NODES
_MERGE_TAG = yamlbuilder.MERGE_TAG


# ---------------------------------------------------------------- the reference (before)


class _OldBuilder:
    """Turns a composed YAML node tree into plain data, recording positions."""

    def __init__(self, name: str, text: str = ""):
        self.name = name
        self.text = text
        self.positions: dict[str, tuple[int, int]] = {}
        self.problems: list[Problem] = []
        self._said: set[tuple[int, int, str]] = set()
        self.constructor = yaml.CSafeLoader("")
        self.count = 0

    def build(self, node: yaml.Node, path: str) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            raise InputError(Problem(f"the document is too large (more than {MAX_NODES} values)",
                                     file=self.name))
        self.positions.setdefault(path, (node.start_mark.line + 1, node.start_mark.column + 1))
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            return [self.build(child, f"{path}[{i}]") for i, child in enumerate(node.value)]
        return self._scalar(node, path)

    def _mapping(self, node: yaml.MappingNode, path: str) -> dict:
        """The object of `node`. Merge keys (`<<: *a`, `<<: [*a, *b]`) are resolved as YAML
        1.1 defines them: a key written in the mapping wins over a merged one, and of the
        merged mappings the first that has a key gives it. Only a key written twice in the
        mapping itself is a duplicate. A merged value keeps the place where it was written."""
        own: dict[str, Any] = {}
        merges: list[yaml.Node] = []
        order: list[str | None] = []  # keys as written; None where the merge key stands
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                if merges:
                    self._problem(key_node, path, "a second merge key `<<'; merge several "
                                  "objects with one list: `<<: [*a, *b]'")
                else:
                    merges.append(value_node)
                    order.append(None)
                continue
            key = self._key(key_node, path)
            if key is None:
                continue
            child = f"{path}.{key}" if path else key
            if key in own:
                self._problem(key_node, child, f"duplicate key `{key}'; each key may appear "
                              "only once in an object")
                continue
            own[key] = self.build(value_node, child)
            order.append(key)
        merged = self._merged(merges[0], path, set(own)) if merges else {}
        out: dict = {}
        for key in order:
            if key is None:
                out.update(merged)
            else:
                out[key] = own[key]
        return out

    def _merged(self, value: yaml.Node, path: str, given: set[str]) -> dict:
        """The keys a merge key's value (an object, or a list of objects) gives, without
        those in `given`, built at `path`."""
        sources = value.value if isinstance(value, yaml.SequenceNode) else [value]
        pairs: list[tuple[str, yaml.Node]] = []
        for source in sources:
            if not isinstance(source, yaml.MappingNode):
                self._problem(source, path, "a merge key `<<' takes an object (`<<: *a') or a "
                              "list of objects (`<<: [*a, *b]'), not "
                              + ("a list" if isinstance(source, yaml.SequenceNode)
                                 else "a plain value"))
                continue
            pairs += self._pairs(source, path)
        out: dict = {}
        for key, value_node in pairs:
            if key not in given and key not in out:
                out[key] = self.build(value_node, f"{path}.{key}" if path else key)
        return out

    def _pairs(self, node: yaml.MappingNode, path: str) -> list[tuple[str, yaml.Node]]:
        """The keys and value nodes a mapping stands for, its own keys before those it
        merges in itself (a merge source may merge others)."""
        own: list[tuple[str, yaml.Node]] = []
        inner: list[tuple[str, yaml.Node]] = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                sources = (value_node.value if isinstance(value_node, yaml.SequenceNode)
                           else [value_node])
                for source in sources:
                    if isinstance(source, yaml.MappingNode):
                        inner += self._pairs(source, path)
                continue
            key = self._key(key_node, path)
            if key is not None and any(key == k for k, _ in own):
                self._problem(key_node, f"{path}.{key}" if path else key, f"duplicate key "
                              f"`{key}'; each key may appear only once in an object")
            elif key is not None:
                own.append((key, value_node))
        return own + inner

    def _key(self, key_node: yaml.Node, path: str) -> str | None:
        if not isinstance(key_node, yaml.ScalarNode):
            self._problem(key_node, path, "a key must be a plain value, not a list or object")
            return None
        key = self._scalar(key_node)
        if isinstance(key, str):
            return key
        return json.dumps(key) if isinstance(key, bool) or key is None else str(key)

    def _tagged(self, node: yaml.ScalarNode) -> bool:
        """Whether the node's tag was written (`!!int x', `&a !foo 3'), not resolved."""
        return re.match(r"(&\S+\s+)?!", self.text[node.start_mark.index:]) is not None

    def _scalar(self, node: yaml.ScalarNode, path: str | None = None) -> Any:
        try:
            value = self.constructor.construct_object(node)
        except Exception:
            if path is not None and self._tagged(node):  # (a tag written: refused)
                written = node.tag.replace("tag:yaml.org,2002:", "!!", 1)
                self._problem(node, path, f"the tag `{written}' cannot make a value of "
                                          f"`{node.value}'")
            return node.value
        if isinstance(value, (date, bytes, set)):  # keep timestamps etc. as the text written
            return node.value
        return value

    def _problem(self, node: yaml.Node, path: str, message: str) -> None:
        place = (node.start_mark.line, node.start_mark.column, message)
        if place in self._said:  # a merge source's problem, found again through the merge
            return
        self._said.add(place)
        self.problems.append(Problem(message, path=path, file=self.name,
                                     line=node.start_mark.line + 1,
                                     column=node.start_mark.column + 1))


def old_parse_yaml_all(text: str, name: str) -> list[tuple[Any, dict[str, tuple[int, int]]]]:
    check_aliases(text, name)
    try:
        nodes = list(yaml.compose_all(text, Loader=yaml.CSafeLoader))
    except yaml.YAMLError as e:
        raise _yaml_error(e, name, text) from None
    except RecursionError:
        raise InputError(Problem("the document is nested too deeply", file=name)) from None
    documents = []
    for node in nodes:
        builder = _OldBuilder(name, text)
        try:
            data = None if node is None else builder.build(node, "")
        except RecursionError:
            raise InputError(Problem("the document is nested too deeply", file=name)) from None
        if builder.problems:
            raise InputError(builder.problems)
        documents.append((data, builder.positions))
    return documents


# ---------------------------------------------------------------- comparing


def outcome(parse: Any, text: str) -> tuple:
    """What `parse' makes of `text': the data (repr: types and order count) and positions in
    the order they were recorded, or every problem with its place."""
    try:
        documents = parse(text, "t.yaml")
    except InputError as e:
        return "refused", [(p.message, p.path, p.file, p.line, p.column) for p in e.problems]
    return "read", [(repr(data), list(positions.items())) for data, positions, *_ in documents]


def assert_same(text: str) -> tuple:
    new = outcome(parse_yaml_all, text)
    assert new == outcome(old_parse_yaml_all, text)
    return new


def _texts() -> list[tuple[str, str]]:
    names = set()
    for pattern in ("**/*.yaml", "**/*.yml"):
        names.update(p for p in glob.glob(str(ROOT / pattern), recursive=True)
                     if "/.venv/" not in p and "/node_modules/" not in p)
        names.update(glob.glob(str(ROOT.parent / "shared/conformance/steep" / pattern),
                               recursive=True))
    texts = [(name, Path(name).read_text(errors="replace")) for name in sorted(names)]
    for name in sorted(glob.glob(str(ROOT / "docs/**/*.md"), recursive=True)):
        blocks = re.findall(r"```ya?ml\n(.*?)```", Path(name).read_text(), re.S)
        texts += [(f"{name}#{i}", block) for i, block in enumerate(blocks)]
    return texts


def test_every_yaml_text_of_the_repository_reads_as_before() -> None:
    texts = _texts()
    assert len(texts) > 200  # services, workflows, fixtures, docs, conformance cases
    read = 0
    for name, text in texts:
        try:
            read += assert_same(text)[0] == "read"
        except AssertionError:
            pytest.fail(f"{name} reads differently")
    assert read > 150


EXAMPLES = [
    "a: &a {x: 1, y: [1, 2]}\nb: *a\nc: {<<: *a, y: 3}\n",
    "a: &a {x: 1}\nb: &b {<<: *a, y: 2}\nc: {<<: *b, z: 3}\n",
    "a: &a {x: 1}\nb:\n  x: 1\n  <<: *a\n  x: 2\n",
    "a: &a {x: 1}\nb:\n  <<: *a\n  <<: *a\n",
    "a: &a [1]\nb:\n  <<: *a\n",
    "b:\n  <<: 3\n",
    "b: {<<: {x: 1, x: 2, <<: {y: 1}}, z: 1}\n",
    "b: {<<: [{x: 1}, {x: 2, y: 2}, 3, [4]], y: 0}\n",
    "a: &k {x: 1}\n*k : 2\n? [1, 2]\n: 3\n? !!merge [1]\n: *k\n",
    "a: &m <<\nb: &s {q: 1}\nc: {*m : *s}\n",
    "a.b: 1\na: {b: 2}\nx[0]: 3\nx: [4]\n",
    "1: a\ntrue: b\n~: c\n2001-12-14: d\n0x1F: e\n1.5: f\n.inf: g\n",
    "- !!seq foo\n- !!map bar\n- !!set baz\n- !!omap q\n- !!binary aGk=\n- !!str 3\n- !foo 3\n"
    "- !!int x\n- 0o17\n- 1_000\n- 2001-12-14t21:59:43.10-05:00\n- .nan\n- ! 12\n",
    "a: &x 1\nb: &x 2\n",
    "a: *x\n",
    "a: &x [*y]\n",
    "a: 1\n---\nb: &a {x: 1}\nc: *a\n---\n- *a\n",
    "a: [1, 2\n",
    "a: {x: 1, x: 2}\n---\nb: [\n",
    "",
    "---\n---\n",
    "a: &a {x: &b {y: 1}, z: *b}\nb: *a\nc: *b\nd: {<<: *a}\n",
    "a: {k: &a {x: 1, x: 2}}\nb: {<<: {k: *a}, y: *a}\n",
    "[" * 1100 + "]" * 1100,
]


@pytest.mark.parametrize("text", EXAMPLES)
def test_anchors_merges_keys_and_tags_read_as_before(text: str) -> None:
    assert_same(text)


SCALARS = ["1", "-2", "0x1F", "1.5", ".inf", "true", "yes", "Off", "~", "null", "", "a.b",
           "'x[0]'", "'q'", '"<<"', "2001-12-14", "!!str 3", "!!binary aGk=", "!!seq s", "!!int z",
           "in/1.txt", "!!merge <<", "'a: b'", "\"\\t\""]
KEYS = ["a", "b", "a", "c", "<<", "a.b", "'x[0]'", "1", "true", "~", "'<<'", "2001-12-14"]


class Texts:
    """Random YAML texts (flow style, several documents) from one seed."""

    def __init__(self, seed: int):
        self.random = random.Random(seed)
        self.anchors: list[str] = []
        self.objects: list[str] = []  # the anchors of objects
        self.count = 0

    def value(self, depth: int) -> str:
        r = self.random
        choice = r.random()
        if self.anchors and choice < 0.2:
            return "*" + r.choice(self.anchors)
        anchor = ""
        if r.random() < 0.25:
            self.count += 1
            anchor = f"&a{self.count if r.random() < 0.99 else 1} "
        if depth > 4 or choice < 0.45:
            text = r.choice(SCALARS)
        elif choice < 0.7:
            text = "[" + ", ".join(self.value(depth + 1) for _ in range(r.randint(0, 4))) + "]"
        else:
            text = "{" + ", ".join(self.pair(depth + 1) for _ in range(r.randint(0, 4))) + "}"
        if anchor:
            self.anchors.append(anchor[1:-1])
            if text.startswith("{"):
                self.objects.append(anchor[1:-1])
        return anchor + text

    def pair(self, depth: int) -> str:
        r = self.random
        if r.random() < 0.15:
            sources = self.objects if self.objects and r.random() < 0.9 else self.anchors
            if sources and r.random() < 0.3:
                return "<<: [" + ", ".join("*" + r.choice(sources) for _ in range(2)) + "]"
            if sources and r.random() < 0.8:
                return "<<: *" + r.choice(sources)
            return "<<: " + self.value(depth)
        if r.random() < 0.05:
            return f"? {self.value(depth)} : {self.value(depth)}"
        return f"{r.choice(KEYS)}: {self.value(depth)}"

    def text(self) -> str:
        documents = []
        for _ in range(self.random.randint(1, 3)):
            self.anchors, self.objects = [], []
            documents.append("\n".join(f"k{i}: {self.value(1)}"
                                       for i in range(self.random.randint(1, 4))))
        return "\n---\n".join(documents) + "\n"


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32))
def test_generated_texts_read_as_before(seed: int) -> None:
    assert_same(Texts(seed).text())


@pytest.mark.parametrize("text", [
    "a: [1, 2, 3, 4, 5, 6]\n", "a: &a [1, 2]\nb: [*a, *a]\n",
    "a: [1, 2, 3, 4, 5, 6]\n---\nb: [\n", "a: 1\n---\nb: [1, 2, 3, 4, 5]\n"])
def test_too_many_values_are_refused_as_before(monkeypatch, text: str) -> None:
    monkeypatch.setattr(yamlbuilder, "MAX_NODES", 5)
    monkeypatch.setitem(globals(), "MAX_NODES", 5)
    assert assert_same(text)[0] == "refused"


@pytest.mark.parametrize("depth, read", [(yamlbuilder.MAX_DEPTH, True),
                                         (yamlbuilder.MAX_DEPTH + 1, False)])
def test_a_document_nested_too_deeply_is_refused(depth: int, read: bool) -> None:
    for text in ("[" * depth + "]" * depth + "\n",
                 "".join("  " * i + "a:\n" for i in range(depth)) + "  " * depth + "1\n"):
        if read:
            assert parse_yaml_all(text, "d.yaml")
            continue
        with pytest.raises(InputError) as info:
            parse_yaml_all(text + "---\nok: 1\n", "d.yaml")
        assert str(info.value) == "d.yaml: the document is nested too deeply"
        with pytest.raises(InputError, match="not valid YAML"):  # told first, as before
            parse_yaml_all(text + "---\nb: [\n", "d.yaml")


def test_no_node_tree_is_held_while_a_long_list_is_read() -> None:
    """The node tree (a node and two marks per value) took more than the data and positions
    themselves; now the peak is the result plus little."""
    import tracemalloc
    text = "vars:\n  - id: files\n    value:\n" + "".join(
        f"      - in/{i}.txt\n" for i in range(20_000))
    tracemalloc.start()
    try:
        ((data, positions, _),) = parse_yaml_all(text, "w.yaml")
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(data["vars"][0]["value"]) == 20_000 == len(positions) - 5
    assert peak < 1.4 * kept  # with the node tree: 2.3 times


@pytest.mark.parametrize("text, key", [("null: x", "null"), ("~: x", "null"), ("true: x", "true"),
                                       ("1: x", "1"), ("1.5: x", "1.5")])
def test_a_key_that_is_no_string_is_its_json_text(text: str, key: str) -> None:
    """JSON's keys are strings: a YAML key that is null is `null' (it was Python's `None', as in
    `unknown property `None'' and a variable's value stored with a key `None')."""
    [(data, *_)] = parse_yaml_all(text + "\n", "k.yaml")
    assert data == {key: "x"}


def test_a_tag_written_that_cannot_make_its_value_is_refused_where_it_is() -> None:
    """`!!float x' or `!!python/object:os.system x' is refused at its place (Steep's reader
    refuses it too), not taken for the text after the tag; a tag that makes its value is
    read, and a key's tag stays lenient."""
    with pytest.raises(InputError) as refused:
        parse_yaml_all("a: !!float x\nb: [!!python/object:os.system y]\nc: !!bool maybe\n"
                       "d: !!timestamp nope\n", "t.yaml")
    assert [str(p) for p in refused.value.problems] == [
        "t.yaml:1:4: a: the tag `!!float' cannot make a value of `x'",
        "t.yaml:2:5: b[0]: the tag `!!python/object:os.system' cannot make a value of `y'",
        "t.yaml:3:4: c: the tag `!!bool' cannot make a value of `maybe'",
        "t.yaml:4:4: d: the tag `!!timestamp' cannot make a value of `nope'"]
    ((data, *_),) = parse_yaml_all("a: !!float 1\nb: !!str 3\n!!int k: 1\n", "t.yaml")
    assert data == {"a": 1.0, "b": "3", "k": 1}
