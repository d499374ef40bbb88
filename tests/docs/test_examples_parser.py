"""The examples harness itself (tests/docs/examples.py), without running anything: which
blocks of a page are files, commands and scripts, what a command must print, and what a
failure shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.examples import (Command, ExampleError, Page, Run, Script, WriteFile, blocks,
                                 environment, failure, front_matter, parse_page, pattern, steps,
                                 unmatched)

PAGE = '''\
---
requires: [docker]
title: A page
---
# Hello

```yaml title="services/hello.yaml"
- id: hello
```

```yaml
not: run
```

```console
$ steepy run hello.yaml
submission ...
... status=SUCCESS

$ steepy validate bad.yaml
bad.yaml:3:5: ...
[exit 2]
$ steepy serve --port 8089 &
$ true && \\
  echo done
done
```

```python
assert 1 + 1 == 2
```

```python title="tool.py"
print("a file, not a script")
```

```sh
echo illustration only
```
'''


def test_a_page_is_read_into_its_steps_in_order() -> None:
    found = steps(PAGE, "docs/page.md")
    assert found == [
        WriteFile("services/hello.yaml", "- id: hello\n", 7),
        Command("steepy run hello.yaml", ("submission ...", "... status=SUCCESS"), 0, False, 16),
        Command("steepy validate bad.yaml", ("bad.yaml:3:5: ...",), 2, False, 20),
        Command("steepy serve --port 8089", (), 0, True, 23),
        Command("true && echo done", ("done",), 0, False, 24),
        Script("assert 1 + 1 == 2\n", 29),
        WriteFile("tool.py", 'print("a file, not a script")\n', 33),
    ]


def test_front_matter_names_the_components_a_page_requires(tmp_path: Path) -> None:
    assert front_matter(PAGE) == {"requires": ["docker"], "title": "A page"}
    assert front_matter("# no front matter\n---\n") == {}
    (tmp_path / "page.md").write_text(PAGE)
    assert parse_page(tmp_path / "page.md", "docs/page.md").requires == ["docker"]
    with pytest.raises(ExampleError, match="no closing"):
        front_matter("---\nrequires: [x]\n# Title\n")


def test_indented_fences_tildes_and_attribute_lists_are_blocks() -> None:
    text = ('!!! example\n\n    ```yaml title="a/b.yaml"\n    x: 1\n      y: 2\n    ```\n\n'
            '~~~~ { .console }\n$ echo ```\n```\n~~~~\n\n'
            "```{ .yaml title='c.yaml' }\nz: 3\n```\n")
    found = blocks(text)
    assert [(b.language, b.title, b.body, b.line) for b in found] == [
        ("yaml", "a/b.yaml", "x: 1\n  y: 2\n", 3),
        ("console", None, "$ echo ```\n```\n", 8),
        ("yaml", "c.yaml", "z: 3\n", 13),
    ]


def test_output_before_any_command_is_an_error_with_its_line() -> None:
    with pytest.raises(ExampleError, match=r"^docs/p.md:3: output without a command"):
        steps("# T\n```console\nhello\n$ echo hello\n```\n", "docs/p.md")


def test_a_file_outside_the_scratch_directory_is_refused() -> None:
    for title in ("/etc/passwd", "../up.yaml", "a/../../b"):
        with pytest.raises(ExampleError, match="not inside the scratch directory"):
            steps(f'```yaml title="{title}"\nx: 1\n```\n', "docs/p.md")


@pytest.mark.parametrize("expected,line,matches", [
    ("submission ...", "submission 3nytb42", True),
    ("... status=SUCCESS", "12:00 chain.finished  chainId=x status=SUCCESS", True),
    ("a ... c", "a b c", True),
    ("steepy, version ...", "steepy, version 0.1.0", True),
    ("id status name", "id\tstatus\t  name", True),  # whitespace matches whitespace
    ("status=SUCCESS", "status=ERROR", False),
    ("a.b", "axb", False),  # no other regular expression
    ("[exit 2]", "[exit 2]", True),
])
def test_an_expected_line_matches_with_wildcards(expected: str, line: str, matches: bool) -> None:
    assert bool(pattern(expected).search(line)) is matches


def test_expected_lines_must_come_in_order_each_on_a_line_of_its_own() -> None:
    output = "one\ntwo\nthree\n"
    assert unmatched(("one", "three"), output) is None
    assert unmatched(("three", "one"), output) == 1
    assert unmatched(("t...", "t..."), output) is None  # two, then three
    assert unmatched(("t...", "t...", "t..."), output) == 2
    assert unmatched(("...", "one", "...", "three", "..."), output) is None
    assert unmatched(("four",), output) == 0
    assert unmatched((), "") is None


def test_a_failure_shows_page_line_command_expected_and_actual_output() -> None:
    step = Command("steepy run hello.yaml", ("submission ...", "... SUCCESS"), 0, False, 42)
    message = failure(Page("docs/index.md"), step, 0, "submission x\n... ERROR\n", 1)
    assert message.splitlines() == [
        "docs/index.md:42: $ steepy run hello.yaml",
        "  did not print the expected lines",
        "  expected:",
        "     submission ...",
        "  >> ... SUCCESS   <- not found (in this order)",
        "  actual output:",
        "   | submission x",
        "   | ... ERROR",
    ]
    code = failure(Page("docs/p.md"), Command("false", (), 2, False, 7), 1, "", None)
    assert "docs/p.md:7: $ false\n  exited 1, expected 2" in code and "[exit 2]" in code
    assert "(nothing)" in code


def test_the_environment_has_no_steepy_settings_from_outside(tmp_path: Path) -> None:
    base = {"PATH": "/usr/bin", "STEEPY_DB_URL": "x", "STEEP_HTTP_PORT": "1", "LANG": "C",
            "HOME": "/root"}
    env = environment(tmp_path, Path("/repo/.venv/bin"), base, {"DOCKER_HOST": "unix:///d"})
    assert env == {"PATH": "/repo/.venv/bin:/usr/bin", "LANG": "C", "HOME": str(tmp_path),
                   "DOCKER_HOST": "unix:///d"}


def test_the_environment_lets_python_write_bytecode(tmp_path: Path) -> None:
    """A reader's Python writes .pyc files; without them each of a page's steepy processes
    compiles the modules changed since the last one again."""
    base = {"PATH": "/usr/bin", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"}
    env = environment(tmp_path, Path("/repo/.venv/bin"), base)
    assert "PYTHONDONTWRITEBYTECODE" not in env
    assert env["PYTHONUNBUFFERED"] == "1"


def test_files_are_written_below_the_scratch_directory(tmp_path: Path) -> None:
    page = Page("docs/p.md", steps=[WriteFile("services/a.yaml", "- id: a\n", 3),
                                    WriteFile("b.txt", "b\n", 9)])
    Run(page, tmp_path, {}).all()
    assert (tmp_path / "services" / "a.yaml").read_text() == "- id: a\n"
    assert (tmp_path / "b.txt").read_text() == "b\n"
