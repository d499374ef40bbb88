"""The generated reference pages name everything they are made from: every key of the JSON
Schemas and of steepy.yaml, every command and option of the command line, every operation of
the HTTP API; their links point at sections that exist. (In process, no build: the strict
build itself is tests/docs/test_build.py.)"""

from __future__ import annotations

import re

import click
import pytest

from tests.docs.reference_pages import load

reference = load()
LINK = re.compile(r"\]\(([\w.-]*)#([\w-]+)\)")
ANCHOR = re.compile(r"\{#([\w-]+)\}")


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return reference.pages()


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else len(text)]


def test_every_generated_page_is_made(pages) -> None:
    assert sorted(pages) == ["reference/cli.md", "reference/configuration.md",
                             "reference/http.md", "reference/macros.md",
                             "reference/services.md", "reference/workflows.md"]


@pytest.mark.parametrize("page", sorted(reference.SCHEMAS.values()))
def test_every_key_of_a_schema_is_in_its_page(pages, page: str) -> None:
    schema = reference.schemas()[page]
    text = pages[f"reference/{page}"]
    keys = reference.ref_schemas.keys_of(schema)
    assert {"id", "name"} <= keys
    assert [k for k in sorted(keys) if f"`{k}`" not in text] == []
    for name in schema.get("$defs", {}):
        assert f"## {name} {{#{name.lower()}}}" in text


def test_the_workflow_page_gives_type_required_default_and_description(pages) -> None:
    text = pages["reference/workflows.md"]
    retry = _section(text, "## retryPolicy ")
    assert ("| `maxAttempts` | integer (≥ -1) |  | 1 | Total number of attempts including the "
            "first one") in retry
    assert "| `delay` | [duration](#duration) |  | 0 |" in retry
    assert "object ([retryPolicy.jitter](#retrypolicy-jitter))" in retry
    assert "## retryPolicy.jitter {#retrypolicy-jitter}" in text  # a nested object: a section
    assert "| `service` | [identifier](#identifier) | yes |" in _section(text, "## executeAction ")
    assert "- With `type: for`: [forAction](#foraction)." in text


def test_every_link_of_the_reference_pages_points_at_a_section(pages) -> None:
    anchors = {path: set(ANCHOR.findall(text)) for path, text in pages.items()}
    broken = []
    for path, text in pages.items():
        for target, anchor in LINK.findall(text):
            page = f"reference/{target}" if target else path
            if page in anchors and anchor not in anchors[page]:
                broken.append(f"{path}: {target}#{anchor}")
    assert broken == []


def test_every_key_of_the_configuration_is_in_its_page(pages) -> None:
    from steepy.config.model import LEAVES
    from steepy.runtimes import BUILTIN, settings_class

    text = pages["reference/configuration.md"]
    runtime_keys = [f"runtimes.{name}.{info.alias or field}"
                    for name, runtime in BUILTIN.items()
                    for field, info in settings_class(runtime).model_fields.items()]
    assert "runtimes.slurm.partition" in runtime_keys
    missing = [k for k in [*LEAVES, *runtime_keys] if f"| `{k}` |" not in text]
    assert missing == []
    assert ("| `agent.killGracePeriod` | duration (`5s`, `250ms`, `1m 30s`) | `5s` | "
            "`STEEPY_AGENT_KILLGRACEPERIOD` |") in text
    assert "| `http.port` | integer | `8080` | `STEEPY_HTTP_PORT` |" in text
    assert "| `plugins[].name` | string | required |" in text
    assert "`db.password`" in text  # Steep's keys that steepy ignores


def _commands(command: click.Command, path: str):
    yield path, command
    if isinstance(command, click.Group):
        for name, sub in sorted(command.commands.items()):
            yield from _commands(sub, f"{path} {name}")


def test_every_command_and_option_of_the_command_line_is_in_its_page(pages) -> None:
    from steepy.cli import main

    text = pages["reference/cli.md"]
    seen: set[int] = set()
    commands = list(_commands(main, "steepy"))
    assert {"steepy run", "steepy schedule add", "steepy worker"} <= {p for p, _ in commands}
    for path, command in commands:
        section = _section(text, f"## {path} {{#{path.replace(' ', '-')}}}")
        if id(command) in seen:
            assert "Another name of" in section
            continue
        seen.add(id(command))
        assert f"Usage: {path}" in section
        if command.help:
            assert command.help.split("\n")[0].strip()[:30] in section.replace("\\*", "*")
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                assert all(opt in section for opt in param.opts), (path, param.opts)


def test_every_operation_of_the_http_api_is_in_its_page(pages) -> None:
    document = reference.ref_http.steepy_document()
    text = pages["reference/http.md"]
    operations = [(m, p) for p, item in document["paths"].items() for m in item]
    assert ("post", "/workflows") in operations and len(operations) > 20
    for method, path in operations:
        section = _section(text, f"## {method.upper()} {path} {{#")
        summary = document["paths"][path][method].get("summary", "")
        assert summary.split(" (")[0] in section
        for parameter in document["paths"][path][method].get("parameters", []):
            assert f"| `{parameter['name']}` | {parameter['in']} |" in section
        for status in document["paths"][path][method].get("responses", {}):
            assert f"| `{status}` |" in section


@pytest.mark.parametrize("description,default", [
    ("Total number of attempts. Default 1.", "1"),
    ("Upper limit of the delay. Default: no limit.", "no limit"),
    ("Version; default \"4.7.0\". (Which versions)", '"4.7.0"'),
    ("Unique id of the action (default: random).", "random"),
    ("Randomisation: none (default), full = ...", "none"),
    ("Default retry policies of the workflow.", ""),  # an adjective, not a value
    ("What the service does.", ""),
])
def test_a_default_is_taken_from_the_description(description: str, default: str) -> None:
    assert reference.ref_schemas.described_default({"description": description}) == default


def test_a_table_cell_escapes_pipes_outside_code_only() -> None:
    from ref_markdown import cell, prose  # beside the hook, which put its folder on sys.path

    assert cell("a|b `x|y`\nc") == "a\\|b `x|y` c"
    assert prose("macro: <id>, STEEPY_*") == "macro: &lt;id&gt;, STEEPY_\\*"
