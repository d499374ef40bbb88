"""Steep's templates (issue 28): steepy.yaml, service metadata and macros whose front matter
says `template: true' are rendered as Steep renders them with Pebble; a template's problems
and the rendered YAML's are placed in the file the user wrote."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from steepy.cli import main
from steepy.config import load_config
from steepy.documents.loading import read_services, template_context
from steepy.errors import InputError

HEAD = "---\ntemplate: true\n---\n"
SERVICE = """\
{% for n in ["cp", "mv"] %}
- id: {{ n }}
  name: {{ n | upper }}
  description: {{ env.DESCRIPTION | default("moves files") }}
  path: {{ config["steep.tmpPath"] }}/{{ n }}
  runtime: other
  parameters:
    - {id: i, name: i, description: i, type: input, cardinality: 1..1}
{% endfor %}
"""


def _problem(call) -> str:
    with pytest.raises(InputError) as caught:
        call()
    (problem,) = caught.value.problems
    return str(problem)


def test_a_templated_service_file_is_rendered_with_config_and_env(tmp_path, monkeypatch) -> None:
    (tmp_path / "s.yaml").write_text(HEAD + SERVICE)
    monkeypatch.setenv("DESCRIPTION", "")  # Pebble's default replaces an empty value too
    found = read_services(str(tmp_path / "s.yaml"), template_context({"steep.tmpPath": "/t"}))
    assert [(s.id, s.name, s.path, s.description) for s in found.values()] == [
        ("cp", "CP", "/t/cp", "moves files"), ("mv", "MV", "/t/mv", "moves files")]


@pytest.mark.parametrize("body, where", [
    ("a: {{ nope }}\n", "s.yaml:4:7: template: 'nope' is undefined"),
    ("a: 1\nb: {{ env.NO_SUCH_VARIABLE_X }}\n", "s.yaml:5:11: template: 'NO_SUCH_VARIABLE_X' is "
     "undefined"),
    ("a: 1\n\nb: {% if %}\n", "s.yaml:6:4: template: Expected an expression"),
])
def test_template_problems_are_placed_in_the_file(tmp_path, monkeypatch, body, where) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text(HEAD + body)
    assert _problem(lambda: read_services("s.yaml")).startswith(where)


def test_a_yaml_problem_after_a_loop_names_the_line_written(tmp_path, monkeypatch) -> None:
    """The loop repeats lines 4-5: the bad line 7 is line 9 of the rendered text."""
    monkeypatch.chdir(tmp_path)
    text = HEAD + "{% for i in 1..2 %}\n- x: {{ i }}\n{% endfor %}\n\n- y: [\n"
    (tmp_path / "s.yaml").write_text(text)
    assert _problem(lambda: read_services("s.yaml")).startswith(
        "s.yaml:8:7: not valid YAML")  # the end of the text: just after line 8's `['
    text = HEAD + "{% for i in range(1, 2) %}\n- id: {{ i }}\n  bad: [\n{% endfor %}\n"
    (tmp_path / "s.yaml").write_text(text)
    message = _problem(lambda: read_services("s.yaml"))
    # the unclosed `[' of line 6 meets the second copy of line 5
    assert message.startswith("s.yaml:5:1: not valid YAML"), message
    assert message.endswith("(the template repeats line 5: this is copy 2)")


def test_schema_problems_in_a_loop_point_at_the_line_written(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text(HEAD + SERVICE.replace("1..1}", "1..1, bogus: 1}"))
    with pytest.raises(InputError) as caught:
        read_services("s.yaml", template_context({"steep.tmpPath": "/t"}))
    column = SERVICE.replace("1..1}", "1..1, bogus: 1}").splitlines()[7].index("bogus: 1") + 1
    assert [p.location() for p in caught.value.problems] == [f"s.yaml:11:{column}"] * 2  # the key


def test_pebble_meanings() -> None:
    from steepy.documents.templating import render

    text = HEAD + ("r: {% for i in range(1, 3) %}{{ loop.index }}{{ i }} {% endfor %}\n"
                   "n: '{{ null | default(\"d\") }}{% if env.X is null %}N{% endif %}'\n"
                   "e: '{{ env.Y | replace({\"a\": \"b\"}) }} {{ env.Y }} {{ env.Y | raw }}'\n"
                   "v: '{% verbatim %}{{ x }}{% endverbatim %}'\n")
    rendered = render(text, "c.yaml", {"env": {"X": None, "Y": "a&b"}})
    assert rendered is not None
    assert rendered.text.splitlines()[3:] == [
        "r: 01 12 23 ", "n: 'dN'", "e: 'b&amp;b a&amp;b a&b'", "v: '{{ x }}'"]


def test_steepy_yaml_is_a_template_of_env_and_override_config_file(tmp_path) -> None:
    (tmp_path / "steepy.yaml").write_text(
        HEAD + "tmpPath: {{ env.T }}\noverrideConfigFile: more.yaml\n"
        "agent:\n  outputLinesToCollect: 5\n  killGracePeriod: 1s\n")
    (tmp_path / "more.yaml").write_text(HEAD + "agent:\n  outputLinesToCollect: {{ env.N }}\n")
    config = load_config(tmp_path, {"T": "/tmp/t", "N": "7"})
    assert (config.tmp_path, config.agent.output_lines_to_collect) == ("/tmp/t", 7)
    assert config.agent.kill_grace_period == 1000 and config.warnings == []
    assert config.written["tmpPath"] == "/tmp/t"
    with pytest.raises(InputError) as caught:
        load_config(tmp_path, {"T": "/tmp/t"})
    assert str(caught.value).startswith(f"{tmp_path / 'more.yaml'}:5:32: template: "), caught.value


def test_front_matter_without_template_is_left_out_of_a_service_file(tmp_path) -> None:
    (tmp_path / "s.yaml").write_text("---\ntemplate: false\n---\n" + SERVICE.split("\n", 1)[1]
                                     .replace("{% endfor %}\n", "").replace("{{ n }}", "cp")
                                     .replace("{{ n | upper }}", "cp")
                                     .replace('{{ env.DESCRIPTION | default("moves files") }}', "x")
                                     .replace('{{ config["steep.tmpPath"] }}/', ""))
    assert list(read_services(str(tmp_path / "s.yaml"))) == ["cp"]


def test_validate_renders_a_service_file_but_not_a_workflow(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DESCRIPTION", "copies")
    (tmp_path / "s.yaml").write_text(HEAD + SERVICE.replace('{{ config["steep.tmpPath"] }}/', ""))
    result = CliRunner().invoke(main, ["validate", "s.yaml"])
    assert result.exit_code == 0, result.output
    assert "2 service(s): cp, mv" in result.output
    (tmp_path / "w.yaml").write_text(HEAD + "api: 4.7.0\nactions: []\n")
    result = CliRunner().invoke(main, ["validate", "w.yaml", "--services", "s.yaml"])
    assert result.exit_code == 2 and "only the configuration, service metadata" in result.output


@pytest.mark.process
def test_a_template_problem_in_steepy_yaml_exits_2_without_a_traceback(tmp_path) -> None:
    (tmp_path / "steepy.yaml").write_text(HEAD + "tmpPath: {{ env.NO_SUCH_VARIABLE_X }}\n")
    (tmp_path / "w.yaml").write_text("api: 4.7.0\nactions: []\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("STEEP")}
    result = subprocess.run([sys.executable, "-m", "steepy.cli", "run", "w.yaml"], cwd=tmp_path,
                            env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert "steepy.yaml:4:17: template: 'NO_SUCH_VARIABLE_X' is undefined" \
        in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_services_named_by_the_configuration_see_its_keys(tmp_path, monkeypatch) -> None:
    """`config' has the keys as written and as Steep names them (`steep.tmpPath')."""
    from steepy.api.setup import LocalSetup

    monkeypatch.chdir(tmp_path)
    (tmp_path / "steepy.yaml").write_text("services: s.yaml\ntmpPath: /scratch\n")
    (tmp_path / "s.yaml").write_text(HEAD + SERVICE.replace(
        '{{ config["steep.tmpPath"] }}/{{ n }}',
        '{{ config["steep.tmpPath"] }}{{ config.services }}'))
    services, _ = LocalSetup().definitions()
    assert [s.path for s in services.values()] == ["/scratchs.yaml"] * 2
