"""Steep's plugin descriptor files: `plugins` (Steep's `steep.plugins`) names files or globs
of descriptor lists, read like service metadata (templates with `config` and `env`, problems
at their file:line:column), relative to the directory the configuration is read from."""

from __future__ import annotations

from pathlib import Path

import pytest

from steepy.config import load_config
from steepy.errors import InputError
from steepy.model.ids import unique_id
from steepy.plugins.pluginset import load_plugins

HEAD = "---\ntemplate: true\n---\n"
KOTLIN = """\
# Steep's own: a Kotlin script
- name: fileOrEmptyList
  type: outputAdapter
  scriptFile: conf/plugins/fileOrEmptyList.kt
  supportedDataType: fileOrEmptyList
"""


def _steep_layout(tmp_path: Path, plugins: str) -> Path:
    """Steep's directory: conf/steep.yaml naming conf/plugins/*.yaml (from the directory
    above conf, as Steep's working directory)."""
    (tmp_path / "conf" / "plugins").mkdir(parents=True)
    (tmp_path / "conf" / "steep.yaml").write_text(
        f"steep:\n  tmpPath: /scratch\n  plugins: {plugins}\n")
    return tmp_path / "conf" / "plugins"


def test_descriptor_files_are_read_rendered_and_their_modules_found_beside_them(
        tmp_path) -> None:
    plugins = _steep_layout(tmp_path, "conf/plugins/*.yaml")
    module = f"setup_{unique_id().replace('-', '_')}"
    (plugins / f"{module}.py").write_text("CALLS = []\n\ndef initialize():\n"
                                          "    CALLS.append(1)\n")
    (plugins / "common.yaml").write_text(KOTLIN)
    (plugins / "mine.yaml").write_text(HEAD + f"""\
{{% for entry in {{"first": "1.0.0", "second": "2.0.0"}} %}}
- name: {{{{ entry.key }}}}-{{{{ config["steep.tmpPath"] | replace({{"/": ""}}) }}}}
  type: initializer
  object: {module}:initialize
  version: {{{{ entry.value }}}}{{{{ env.SUFFIX }}}}
{{% endfor %}}
""")
    config = load_config(tmp_path, {"SUFFIX": "-rc1"})
    assert [(p.name, p.version) for p in config.plugins] == [
        ("first-scratch", "1.0.0-rc1"), ("second-scratch", "2.0.0-rc1")]
    (warning,) = config.warnings
    assert str(warning).startswith(f"{plugins / 'common.yaml'}:2:3: [0]: plugin "
                                   "`fileOrEmptyList' is a Kotlin script (scriptFile), which "
                                   "steepy cannot run; ignored"), warning
    found = [p for p in load_plugins(config).of("initializer")]
    assert [(p.name, p.origin) for p in found] == [
        ("first-scratch", str(plugins / "mine.yaml")),
        ("second-scratch", str(plugins / "mine.yaml"))]
    assert config.plugin_place(1).location() == f"{plugins / 'mine.yaml'}:5:3"


def test_files_and_descriptors_written_in_place_mix(tmp_path) -> None:
    (tmp_path / "more").mkdir()
    module, beside = (f"setup_{unique_id().replace('-', '_')}" for _ in range(2))
    (tmp_path / f"{module}.py").write_text("def initialize():\n    pass\n")
    (tmp_path / "more" / f"{beside}.py").write_text("def initialize():\n    pass\n")
    (tmp_path / "more" / "a.json").write_text(
        f'[{{"name": "from-json", "type": "initializer", "object": "{beside}:initialize"}}]')
    (tmp_path / "steepy.yaml").write_text(
        f"plugins:\n  - more/*.json\n  - {{name: here, type: initializer, object: "
        f"{module}:initialize}}\n  - nothing/*.yaml\n")
    config = load_config(tmp_path, {})
    assert [p.name for p in config.plugins] == ["from-json", "here"]
    assert config.plugin_place(1).location() == f"{tmp_path / 'steepy.yaml'}:3:5"
    plugins = load_plugins(config).of("initializer")
    assert [p.origin for p in plugins] == [str(tmp_path / "more" / "a.json"), "steepy.yaml"]


@pytest.mark.parametrize("text, where", [
    ("- name: x\n  type: runner\n  object: m:f\n",
     "mine.yaml:2:9: [0].type: "),
    ("- name: x\n  type: initializer\n", "mine.yaml:1:3: [0]: plugin `x' needs `object: "),
    (HEAD + "- name: {{ env.NOPE }}\n", "mine.yaml:4:16: template: 'NOPE' is undefined"),
    ("name: x\n", "mine.yaml:1:1: a plugin file holds a list of plugin descriptors"),
    ("- [\n", "mine.yaml:1:4: not valid YAML"),
])
def test_problems_in_descriptor_files_are_located(tmp_path, text, where) -> None:
    plugins = _steep_layout(tmp_path, "[conf/plugins/mine.yaml]")
    (plugins / "mine.yaml").write_text(text)
    with pytest.raises(InputError) as caught:
        load_config(tmp_path, {})
    said = [str(p).replace(f"{plugins}/", "") for p in caught.value.problems]
    assert said[0].startswith(where), said
