"""`load_sections`: the groups of the configuration a command that only reads the database
needs (`db`, `logs`), read and checked as load_config reads them, with the same model and
defaults, the other keys not looked at (issue 31)."""

from __future__ import annotations

from pathlib import Path

import pytest
from steepy.config import load_config, load_sections
from steepy.config.located import _PLAIN, _yaml_value
from steepy.errors import InputError

SECTIONS = ("db", "logs")


def _problems(directory: Path, text: str, environ: dict | None = None) -> list[tuple]:
    (directory / "steepy.yaml").write_text(text)
    with pytest.raises(InputError) as caught:
        load_sections(SECTIONS, directory, environ or {})
    return [(Path(p.file).name, p.line, p.column, p.path, p.message)
            for p in caught.value.problems]


def test_without_a_file_the_sections_are_the_models_defaults(tmp_path) -> None:
    config = load_config(tmp_path, {})
    assert load_sections(SECTIONS, tmp_path, {}) == {"db": config.db, "logs": config.logs}


@pytest.mark.parametrize("variable", ["STEEPY_OVERRIDECONFIGFILE", "STEEP_OVERRIDECONFIGFILE"])
def test_an_override_file_named_by_a_variable_counts_as_for_load_config(tmp_path,
                                                                        variable) -> None:
    """The reading commands and `steepy worker` must agree on the database."""
    (tmp_path / "steepy.yaml").write_text("db:\n  url: sqlite:///base.db\n")
    (tmp_path / "other.yaml").write_text("db:\n  url: sqlite:///override.db\n")
    environ = {variable: "other.yaml"}
    assert load_config(tmp_path, environ).db.url == "sqlite:///override.db"
    assert load_sections(SECTIONS, tmp_path, environ)["db"].url == "sqlite:///override.db"


def test_values_from_the_file_and_variables_are_those_load_config_reads(tmp_path) -> None:
    (tmp_path / "steepy.yaml").write_text(
        "steep:\n  db.url: sqlite:///x.db\nlogs:\n  processChains:\n    groupByPrefix: 2\n"
        "agent.instances: 3\n")
    environ = {"STEEPY_LOGS_PROCESSCHAINS_PATH": "/var/log/chains",
               "STEEPY_LOGS_PROCESSCHAINS_FORMAT": "steep"}
    sections = load_sections(SECTIONS, tmp_path, environ)
    config = load_config(tmp_path, environ)
    assert sections == {"db": config.db, "logs": config.logs}
    assert (sections["db"].url, sections["logs"].process_chains.path,
            sections["logs"].process_chains.group_by_prefix) == (
        "sqlite:///x.db", "/var/log/chains", 2)


def test_problems_of_the_sections_are_located_and_others_are_not_looked_at(tmp_path) -> None:
    found = _problems(tmp_path, "agent:\n  instances: 0\nbogus: 1\ndb:\n  url: mysql://h/d\n"
                                "logs.processChains.groupByPrefix: -1\n")
    assert [where[:4] for where in found] == [("steepy.yaml", 5, 8, "db.url"), (
        "steepy.yaml", 6, 35, "logs.processChains.groupByPrefix")]
    assert "at least 0" in found[1][4]


@pytest.mark.parametrize("text, where, words", [
    ("db: 5\n", ("steepy.yaml", 1, 5, "db"), "expected an object with the keys db.url"),
    ("logs:\n  processChains: [a]\n", ("steepy.yaml", 2, 18, "logs.processChains"),
     "expected an object"),
    ("db.url: sqlite://\nsteep.db.url: sqlite://\n", ("steepy.yaml", 2, 15, "db.url"),
     "second time"),
])
def test_a_group_given_a_value_and_a_key_given_twice(tmp_path, text, where, words) -> None:
    [found] = _problems(tmp_path, text)
    assert found[:4] == where and words in found[4]


def test_a_bad_variable_is_named(tmp_path) -> None:
    [found] = _problems(tmp_path, "# nothing\n", {"STEEPY_LOGS_PROCESSCHAINS_GROUPBYPREFIX": "x"})
    assert found[:4] == ("$STEEPY_LOGS_PROCESSCHAINS_GROUPBYPREFIX", None, None,
                         "logs.processChains.groupByPrefix")


def test_a_file_that_is_not_yaml_is_a_located_problem(tmp_path) -> None:
    (tmp_path / "steepy.yaml").write_text("db: [\n")
    with pytest.raises(InputError) as caught:
        load_sections(SECTIONS, tmp_path, {})
    assert caught.value.problems[0].file.endswith("steepy.yaml")
    assert caught.value.problems[0].line is not None


@pytest.mark.parametrize("text", [
    "/tmp/logs", "logs/processchains", "sqlite:///.steepy/steepy.db", "C:/x", "x@y",
    "postgresql+psycopg://u:p@h:5432/db", "00123", "1:20", "yes", "null", "~", "...",
    "2001-01-01", ".inf", "a~b", "abc:", "ö/ß"])
def test_a_plain_variable_of_a_text_key_is_taken_as_yaml_would(text) -> None:
    """A text key's variable that matches _PLAIN is taken as written without YAML: YAML
    reads it as the same string, or as no string (which a text key takes as written too)."""
    assert _PLAIN.fullmatch(text)
    value = _yaml_value(text)  # what the variable gives without the shortcut
    assert not isinstance(value, str) or value == text


@pytest.mark.parametrize("text", ["'quoted'", "a #comment", "- a", "[a]", "a: b", "&x a",
                                  "*x", "!!str 1", "%x", "a b", " a", "=", "{a: 1}", "|x"])
def test_other_text_is_read_as_yaml(text) -> None:
    assert not _PLAIN.fullmatch(text)


def test_the_groups_read_alone_are_the_configurations_own() -> None:
    """steepy.config.storage names the groups that can be read without the whole model
    (tests/cli/test_import_budget.py checks that the reading commands do not import it): its
    classes are Config's fields of these keys, with the same keys."""
    from steepy.config.model import LEAVES, Config
    from steepy.config.section import _attribute_names, _leaves
    from steepy.config.storage import SECTIONS

    fields = _attribute_names(Config)
    assert {name: Config.model_fields[fields[name]].annotation for name in SECTIONS} == SECTIONS
    for name, model in SECTIONS.items():
        assert {f"{name}.{key}": text for key, text in _leaves(model).items()} == {
            key: text for key, text in LEAVES.items() if key.startswith(f"{name}.")}


def _plain_values(sections: dict) -> dict:
    """Every key of storage_plain.KEYS -> its value in `sections' (either kind of object)."""
    from steepy.config.storage_plain import KEYS, attribute

    found = {}
    for key in KEYS:
        node = sections
        group, *rest = key.split(".")
        node = sections[group]
        for part in rest:
            node = getattr(node, attribute(part))
        found[key] = node
    return found


@pytest.mark.parametrize("text, environ", [
    (None, {}),
    ("db.url: postgresql+psycopg://u:p@h:5432/db\nagent.instances: 0\n", {}),
    ("# nothing\n", {"STEEPY_LOGS_PROCESSCHAINS_PATH": "/var/log/chains",
                     "STEEP_DB_URL": "sqlite:///x.db", "STEEPY_TMPPATH": "/tmp/x"}),
    ("steep:\n  logs.processChains.path: 'quoted path'\n", {}),
    ("db.url: sqlite:///base.db\n", {"STEEPY_OVERRIDECONFIGFILE": "other.yaml"}),
], ids=["nothing", "file", "variables", "steep-prefix", "override"])
def test_plain_values_are_read_without_pydantic_as_load_sections_reads_them(
        tmp_path, text, environ) -> None:
    """(tests/cli/test_import_budget.py checks that a reading command then imports no
    pydantic)"""
    from steepy.config.storage_plain import plain_storage

    if text is not None:
        (tmp_path / "steepy.yaml").write_text(text)
    (tmp_path / "other.yaml").write_text("db:\n  url: sqlite:///override.db\n")
    plain = plain_storage(tmp_path, environ)
    assert plain is not None
    assert _plain_values(plain) == _plain_values(load_sections(SECTIONS, tmp_path, environ))


@pytest.mark.parametrize("text, environ", [
    ("logs.processChains.groupByPrefix: 2\n", {}),  # a number: pydantic checks it
    ("db:\n  url: mysql://h/d\n", {}),  # a problem
    ("db.url: jdbc:postgresql://h:5432/db\n", {}),
    ("logs.processChains.path: ''\n", {}),
    ("logs.processChains.path: 5\n", {}),
    ("db: 5\n", {}),
    ("db.url: sqlite://\nsteep.db.url: sqlite://\n", {}),  # a key given twice
    ("db.bogus: 1\n", {}),
    (None, {"STEEPY_LOGS_PROCESSCHAINS_FORMAT": "steep"}),
    (None, {"STEEPY_LOGS_PROCESSCHAINS_DATABASE": "true"}),
], ids=repr)
def test_anything_but_plain_values_is_left_to_load_sections(tmp_path, text, environ) -> None:
    """So that a problem is reported by the one check there is, at its place."""
    from steepy.config.storage_plain import plain_storage

    if text is not None:
        (tmp_path / "steepy.yaml").write_text(text)
    assert plain_storage(tmp_path, environ) is None


def test_the_plain_keys_are_the_models_keys_with_their_defaults() -> None:
    from steepy.config.section import _attribute_names, _leaves
    from steepy.config.storage import SECTIONS as MODELS
    from steepy.config.storage_plain import GROUPS, KEYS, attribute

    assert GROUPS == tuple(MODELS)
    leaves = {f"{name}.{key}": text for name, model in MODELS.items()
              for key, text in _leaves(model).items()}
    assert {key: text for key, (_, text) in KEYS.items()} == leaves
    defaults = _plain_values({name: model() for name, model in MODELS.items()})
    assert defaults == {key: default for key, (default, _) in KEYS.items()}
    for name, model in MODELS.items():  # an alias's attribute name is its snake case
        fields = model.model_fields
        assert all(attribute(f.alias) == field for field, f in fields.items() if f.alias)
    assert _attribute_names(MODELS["logs"])["processChains"] == attribute("processChains")


def test_a_file_that_is_not_yaml_is_the_same_problem_either_way(tmp_path) -> None:
    from steepy.config.storage_plain import plain_storage

    (tmp_path / "steepy.yaml").write_text("logs: [\n")
    raised = []
    for read in (plain_storage, lambda *args: load_sections(SECTIONS, *args)):
        with pytest.raises(InputError) as caught:
            read(tmp_path, {})
        raised.append([(p.file, p.line, p.column, p.message) for p in caught.value.problems])
    assert raised[0] == raised[1] and raised[0][0][1] == 1
