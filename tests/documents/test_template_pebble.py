"""Pebble's `include`, iteration over maps and the `contains` operator in the files Steep
renders as templates (service metadata, steepy.yaml), read from real files."""

from __future__ import annotations

import pytest

from steepy.config import load_config
from steepy.documents.loading import read_services, template_context
from steepy.errors import InputError

HEAD = "---\ntemplate: true\n---\n"
PARAMETERS = ("  parameters:\n    - {id: i, name: i, description: i, type: input, "
              "cardinality: 1..1}\n")


def _service(service_id: str, extra: str = "") -> str:
    return (f"- id: {service_id}\n  name: {service_id}\n  description: d\n  path: p\n"
            f"  runtime: other\n{extra}")


def _problem(call) -> str:
    with pytest.raises(InputError) as caught:
        call()
    (problem,) = caught.value.problems
    return str(problem)


def test_include_is_relative_to_the_including_file_then_the_working_directory(
        tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    services = tmp_path / "conf" / "services"
    (services / "common").mkdir(parents=True)
    (services / "main.yaml").write_text(
        HEAD + _service("{{ name }}") + '{% include "common/parameters.yaml" %}'
        + '{% include "conf/tail.yaml" %}')
    # included files have no front matter; they see the includer's variables and may include
    (services / "common" / "parameters.yaml").write_text(
        PARAMETERS + "{% include 'more.yaml' %}")
    (services / "common" / "more.yaml").write_text("    - {id: o, name: o, description: o, "
                                                   "type: output, cardinality: 1..1, "
                                                   "dataType: {{ kind }}}\n")
    (tmp_path / "conf" / "tail.yaml").write_text(_service("second", "  parameters: []\n"))
    context = dict(template_context(), name="first", kind="directory")
    found = read_services(str(services / "main.yaml"), context)
    assert list(found) == ["first", "second"]
    assert [(p.id, p.data_type) for p in found["first"].parameters] == [
        ("i", "string"), ("o", "directory")]


def test_include_problems_are_placed_at_the_include(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "part.yaml").write_text("a: 1\nb: {{ nope }}\n")
    (tmp_path / "bad.yaml").write_text("a: 1\nb: {% if %}\n")
    (tmp_path / "broken.yaml").write_text("x: [\n")
    body = "a: 0\n  {% include 'FILE' %}\n"
    cases = {"missing.yaml": "s.yaml:5:3: template: cannot include `missing.yaml': no file "
                             "missing.yaml",
             "part.yaml": "s.yaml:5:3: template: 'nope' is undefined (line 2 of the included "
                          "part.yaml)",
             "bad.yaml": "s.yaml:5:3: template: Expected an expression, got 'end of statement "
                         "block' (line 2 of the included bad.yaml)",
             "broken.yaml": "s.yaml:5:1: not valid YAML"}
    for name, expected in cases.items():
        (tmp_path / "s.yaml").write_text(HEAD + body.replace("FILE", name))
        said = _problem(lambda: read_services("s.yaml"))
        assert said.startswith(expected), (name, said)


def test_maps_iterate_as_entries_and_contains_asks_lists_maps_and_strings(tmp_path) -> None:
    (tmp_path / "steepy.yaml").write_text(HEAD + """\
{% set m = {"tmpPath": "/t", "outPath": "/o"} %}
{% for entry in m %}
{{ entry.key }}: {{ entry.value }}{% endfor %}
{% set tags = ["gpu", "big"] %}
agent:
  capabilities:
{% for key, value in {"a": 1} %}    - {{ key }}{{ value }}-{{ loop.index }}
{% endfor %}\
{% for word in ["gpu", "small", ["gpu", "big"], ["gpu", "tiny"]] %}\
{% if tags contains word %}    - has-{{ word | join("+") if word is iterable and word is not \
string else word }}
{% endif %}{% endfor %}\
{% if m contains "tmpPath" and not (m contains "/t") %}    - map-keys
{% endif %}\
{% if env.HOME_DIR contains "home" and not (env.HOME_DIR contains 'x') %}    - string
{% endif %}\
{% if null contains 1 %}    - never
{% endif %}\
{% for entry in null %}    - never
{% endfor %}""")
    config = load_config(tmp_path, {"HOME_DIR": "/home/me"})
    assert (config.tmp_path, config.out_path) == ("/t", "/o")
    assert config.agent.capabilities == ["a1-0", "has-gpu", "has-gpu+big", "map-keys", "string"]
    (tmp_path / "steepy.yaml").write_text(HEAD + "tmpPath: x\n{% if 3 contains 1 %}{% endif %}\n")
    assert _problem(lambda: load_config(tmp_path, {})).startswith(
        f"{tmp_path / 'steepy.yaml'}:5:")
