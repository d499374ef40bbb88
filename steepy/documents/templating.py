"""Steep's templates: a YAML file whose front matter says `template: true' is rendered before
it is read, as Steep renders it with Pebble (strict variables, newlines after tags kept).

steepy renders with Jinja2's sandbox, every undefined name an error, and makes the Pebble
constructs Steep's users write mean what they mean in Pebble: `range(1, 3)' and `1..3' include
3, `loop.index' counts from 0, `default' also replaces null and empty values, `null' is None,
`is null' and `is empty' are tests, `replace' takes Pebble's map, `split' and `raw' exist, and
values are HTML-escaped as Pebble's default does (`{{ env.URL | raw }}' writes it as is).
Pebble's `{% include "file" %}' reads a file beside the including file (or, as Steep's
loader does, in the working directory), `{% for entry in map %}' gives entries with `key' and
`value', and `a contains b' asks lists, maps (their keys) and strings.

Every line of the rendered text remembers the source line it came from (a marker is put after
each newline of the template's own text and taken out after rendering), so that a problem
found in the rendered YAML names the line the user wrote, also inside a loop.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator, Mapping

import yaml

from steepy.documents.pebble import (contains, default, empty, escape, inclusive_range,
                                     iterable, replace)
from steepy.errors import InputError, Problem

_MARK, _END = "\x1e", "\x1f"
_MARKER = re.compile(f"{_MARK}(\\d+){_END}")
# Steep's front matter: `---' lines (three dashes or more) around it, at the start of the file
_FRONT_MATTER = re.compile(r"\A\s*^-{3,}[ \t]*\r?\n(.*?)\r?\n^-{3,}(.*)\Z", re.S | re.M)
_TRUE = {"true", "yes", "on", "y", "t"}  # commons-lang's BooleanUtils.toBoolean
_TEMPLATE_NAME = "<steep-template>"


@dataclass
class Source:
    """A file's text split at its front matter: what YAML is read from, and from which line
    of the file on (`first': the file line of its line 1)."""

    body: str
    first: int = 1
    template: bool = False  # the front matter says `template: true'
    template_line: int = 1  # where `template' is written
    template_column: int = 1


def split(text: str) -> Source:
    """The front matter taken off `text' (Steep reads the rest also when `template' is false);
    the whole text when it has none."""
    match = _FRONT_MATTER.match(text)
    if match is None:
        return Source(text)
    try:
        header = yaml.safe_load(match.group(1))
    except yaml.YAMLError:
        return Source(text)
    if not isinstance(header, dict):
        return Source(text)
    value = header.get("template")
    first = text[:match.start(2)].count("\n") + 1  # the closing `---' line
    key = re.search(r"^([ \t]*)[\"']?template[\"']?[ \t]*:", match.group(1), re.M)
    line = text[:match.start(1)].count("\n") + 1
    line += match.group(1)[:key.start()].count("\n") if key else 0
    column = 1 + (len(key.group(1)) if key else 0)
    templated = value is not None and str(value).lower() in _TRUE
    return Source(match.group(2), first, templated, line, column)


@dataclass
class Rendered:
    """The text YAML is read from, and where each of its lines is in the file."""

    text: str
    name: str
    lines: list[int] = field(default_factory=list)  # rendered line (0-based) -> file line
    source: list[str] = field(default_factory=list)  # the file's lines
    copies: list[int] = field(default_factory=list)  # rendered line -> which copy (1, 2, ...)

    def line(self, line: int) -> int:
        """The file line of rendered line `line' (1-based)."""
        return self.lines[min(line, len(self.lines)) - 1] if self.lines else line

    def place(self, line: int, column: int) -> tuple[int, int, str]:
        """File line, column and a note for rendered `line':`column'; the note says what the
        template made of the line when the column cannot be trusted or the line repeats."""
        at = self.line(line)
        rendered = self.text.split("\n")
        rendered_line = rendered[line - 1] if 0 < line <= len(rendered) else ""
        written = self.source[at - 1] if 0 < at <= len(self.source) else ""
        note = ""
        if rendered_line[:column - 1] != written[:column - 1]:
            note = (f" (the template made line {at} `{rendered_line.strip()}'; this is column "
                    f"{column} of that)")
            column = 1
        if self.lines.count(at) > 1:
            copy = self.copies[line - 1] if 0 < line <= len(self.copies) else 1
            note += f" (the template repeats line {at}: this is copy {copy})"
        return at, column, note


# tokens after which a `contains' is an operator (it follows an operand)
_OPERAND_END = {"name", "string", "integer", "float", "rparen", "rbracket", "rbrace"}
_NOT_OPERANDS = {"set", "for", "in", "if", "elif", "not", "and", "or", "is", "with",
                 "include", "import", "from", "as", "macro", "call", "block", "filter"}
_OPEN, _CLOSE = {"lparen", "lbracket", "lbrace"}, {"rparen", "rbracket", "rbrace"}


class _Files:
    """Where Pebble's `include' finds a file: `root' is the text of the file being read (in
    `directory'); every other name is a file, read afresh at each rendering."""

    def __init__(self, root: str, directory: Path):
        self.root, self.directory = root, directory
        self.asked: dict[str, str] = {}  # a file's path -> the name an include gave

    def resolve(self, name: str, parent: str | None) -> str:
        """Beside the including file (the root's directory for the root); else, as Steep's
        FileLoader, the name itself (from the working directory)."""
        base = self.directory if parent in (None, _TEMPLATE_NAME) else Path(parent).parent
        beside = str(base / name)
        found = beside if Path(beside).is_file() or not Path(name).is_file() else name
        self.asked[found] = name
        return found

    def source(self, path: str) -> tuple[str, str, Any]:
        from jinja2 import TemplateNotFound

        if path == _TEMPLATE_NAME:
            return _pebble_text(self.root), _TEMPLATE_NAME, lambda: True
        name = self.asked.get(path, path)
        try:
            text = Path(path).read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as e:
            reason = "no file" if isinstance(e, FileNotFoundError) else f"cannot read ({e})"
            also = "" if name == path else f" or {name}"
            raise TemplateNotFound(path, f"cannot include `{name}': {reason} {path}{also}"
                                   ) from None
        return _pebble_text(text), path, lambda: False


def _pebble_tokens(stream: Any, Token: Any) -> Iterator[Any]:
    """Pebble's spellings as Jinja2's, token by token: line markers in the root template's
    text, `loop.index' from 0, `a..b' as `range(a, b)', `for x in e' as
    `for x in _iterable(e)', `a contains b' as `a is contains b'."""
    tokens = list(stream)
    root = stream.name == _TEMPLATE_NAME
    i, iterating, depth = 0, None, 0
    while i < len(tokens):
        token = tokens[i]
        before = tokens[i - 1] if i else token
        if iterating == "iterable":
            depth += (token.type in _OPEN) - (token.type in _CLOSE)
            if depth < 0 or (depth == 0 and (token.type == "block_end" or (
                    token.type == "name" and token.value in ("if", "recursive")))):
                yield Token(token.lineno, "rparen", ")")
                iterating = None
        if token.type == "name" and token.value == "for" and before.type == "block_begin":
            iterating, depth = "target", 0
        if token.type == "data":
            yield _marked(token, Token) if root else token
        elif (token.type == "name" and token.value == "in" and iterating == "target"):
            yield token
            yield Token(token.lineno, "name", "_iterable")
            yield Token(token.lineno, "lparen", "(")
            iterating, depth = "iterable", 0
        elif (token.type == "name" and token.value == "contains" and i
              and before.type in _OPERAND_END
              and not (before.type == "name" and before.value in _NOT_OPERANDS)):
            yield Token(token.lineno, "name", "is")
            yield token
        elif (token.type == "name" and token.value in ("index", "revindex") and i >= 2
              and tokens[i - 1].type == "dot" and tokens[i - 2].value == "loop"):
            yield Token(token.lineno, "name", token.value + "0")
        elif (token.type in ("integer", "name") and i + 3 < len(tokens)
              and tokens[i + 1].type == "dot" and tokens[i + 2].type == "dot"
              and tokens[i + 3].type in ("integer", "name")):
            line, high = token.lineno, tokens[i + 3]
            for kind, value in (("name", "range"), ("lparen", "("),
                                (token.type, token.value), ("comma", ","),
                                (high.type, high.value), ("rparen", ")")):
                yield Token(line, kind, value)
            i += 3
        else:
            yield token
        i += 1


def _marked(token: Any, Token: Any) -> Any:
    parts = token.value.split("\n")
    text = parts[0] + "".join(f"\n{_MARK}{token.lineno + n}{_END}{part}"
                              for n, part in enumerate(parts[1:], 1))
    return Token(token.lineno, "data", text)


@lru_cache(maxsize=1)
def _environment() -> Any:
    from jinja2 import BaseLoader, StrictUndefined
    from jinja2.ext import Extension
    from jinja2.lexer import Token
    from jinja2.sandbox import SandboxedEnvironment
    from markupsafe import Markup

    class Loader(BaseLoader):
        def __init__(self, files: _Files):
            self.files = files

        def get_source(self, environment, template):  # type: ignore[no-untyped-def]
            return self.files.source(template)

    class Environment(SandboxedEnvironment):
        def join_path(self, template: str, parent: str) -> str:
            return self.loader.files.resolve(template, parent)  # type: ignore[union-attr]

        def for_file(self, root: str, directory: Path) -> Any:
            return self.overlay(loader=Loader(_Files(root, directory)), cache_size=0)

    class Pebble(Extension):
        """Token rewrites: line markers in the root template's text, `loop.index' from 0,
        `a..b' as `range(a, b)', `for x in e' as `for x in _iterable(e)', `a contains b' as
        `a is contains b'."""

        def filter_stream(self, stream):  # type: ignore[no-untyped-def]
            return _pebble_tokens(stream, Token)

    env = Environment(undefined=StrictUndefined, keep_trailing_newline=True,
                      extensions=[Pebble], finalize=escape)
    env.globals.update(range=inclusive_range, null=None, _iterable=iterable)
    env.filters.update(default=default, d=default, replace=replace, raw=Markup,
                       split=lambda value, sep: str(value).split(sep))
    env.tests.update(null=lambda v: v is None, empty=empty,
                     map=lambda v: isinstance(v, Mapping), contains=contains)
    return env


_VERBATIM = re.compile(r"\{%(-?)\s*(end)?verbatim\s*(-?)%\}")


def _pebble_text(text: str) -> str:
    """Pebble's `verbatim' is Jinja2's `raw'."""
    return _VERBATIM.sub(lambda m: "{%" + m[1] + f" {m[2] or ''}raw " + m[3] + "%}", text)


def render(text: str, name: str, context: Mapping[str, Any]) -> Rendered | None:
    """`text' rendered when its front matter asks for it (None otherwise); InputError at the
    place in the file of a template problem."""
    source = split(text)
    if not source.template:
        return None
    from jinja2 import TemplateError, TemplateSyntaxError

    lines = text.split("\n")
    directory = Path(name).parent if not name.startswith("<") else Path.cwd()
    try:
        environment = _environment().for_file(source.body, directory)
        output = environment.get_template(_TEMPLATE_NAME).render(dict(context))
    except TemplateSyntaxError as e:
        if e.name == _TEMPLATE_NAME:
            raise _located(e.message or str(e), e.lineno, source, lines, name) from None
        message = f"{e.message} (line {e.lineno} of the included {e.filename})"
        raise _located(message, _line_of(e)[0], source, lines, name) from None
    except TemplateError as e:
        raise _located(_in_included(str(e), e), _line_of(e)[0], source, lines, name) from None
    except (ArithmeticError, TypeError, ValueError, LookupError) as e:
        raise _located(_in_included(f"{type(e).__name__}: {e}", e), _line_of(e)[0], source,
                       lines, name) from None
    return _mapped(output, source, name, lines)


def _line_of(error: BaseException) -> tuple[int | None, tuple[str, int] | None]:
    """The template line the error happened at, from the frames Jinja2 names after it, and
    (file, line) in the innermost included file when it happened in one."""
    tb, line, inner = error.__traceback__, None, None
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename == _TEMPLATE_NAME:
            line, inner = tb.tb_lineno, None
        elif line is not None and "__jinja_exception__" in tb.tb_frame.f_globals:
            inner = (filename, tb.tb_lineno)
        tb = tb.tb_next
    return line, inner


def _in_included(message: str, error: BaseException) -> str:
    inner = _line_of(error)[1]
    return message if inner is None else f"{message} (line {inner[1]} of the included {inner[0]})"


def _located(message: str, line: int | None, source: Source, lines: list[str],
             name: str) -> InputError:
    if line is None:
        return InputError(Problem(f"template: {message}", file=name, line=source.template_line,
                                  column=source.template_column))
    at = source.first + line - 1
    written = lines[at - 1] if at - 1 < len(lines) else ""
    quoted = re.search(r"'([^']+)' is undefined|has no attribute '([^']+)'", message)
    if quoted and quoted[2]:  # `env.X': the name, not Jinja2's `'dict object' has no ...'
        message = f"'{quoted[2]}' is undefined"
    column = written.find(quoted[1] or quoted[2]) if quoted else -1
    if column < 0:
        column = max(written.find("{{"), written.find("{%"), 0)
    return InputError(Problem(f"template: {message}", file=name, line=at, column=column + 1))


def _mapped(output: str, source: Source, name: str, lines: list[str]) -> Rendered:
    out_lines, at_lines, copies = [], [], []
    seen: dict[int, int] = {}
    current = source.first
    for n, line in enumerate(output.split("\n")):
        marks = _MARKER.findall(line)
        if marks:
            current = int(marks[-1])  # template line (1-based) of the text that starts here
            current = source.first + current - 1
        elif n == 0:
            current = source.first
        out_lines.append(_MARKER.sub("", line))
        at_lines.append(current)
        seen[current] = seen.get(current, 0) + 1
        copies.append(seen[current])
    # rendered lines before the first: the file's lines above the body (front matter)
    pad = source.first - 1
    text = "\n" * pad + "\n".join(out_lines)
    return Rendered(text, name, list(range(1, pad + 1)) + at_lines, lines,
                    [1] * pad + copies)


def relocated(error: InputError, rendered: Rendered) -> InputError:
    """`error' (found in the rendered text) with its problems placed in the file."""
    for problem in error.problems:
        if problem.file == rendered.name and problem.line is not None:
            line, column, note = rendered.place(problem.line, problem.column or 1)
            problem.line, problem.column = line, column
            problem.message += note
    return InputError(error.problems)


def relocated_positions(positions: dict[str, tuple[int, int]],
                        rendered: Rendered) -> dict[str, tuple[int, int]]:
    return {path: rendered.place(line, column)[:2] for path, (line, column) in positions.items()}
