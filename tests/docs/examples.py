"""The runnable examples of a documentation page: which blocks run, what they must print, and
running them in order in one scratch directory (the convention is in docs/ and in
tests/docs/test_examples.py).

- A fenced block with a title (```` ```yaml title="hello.yaml" ````) is a file, written to that
  path when the run reaches it.
- A ```` ```console ```` block holds commands after `$ ` prompts, each run with bash; the lines
  after a command are expected output: each must appear in the command's output (stdout and
  stderr), in this order, other lines may be in between, `...` matches any text (a line of
  just `...` stands for any lines), and runs of spaces and tabs match any whitespace. The command must exit 0, or N when the last expected
  line is `[exit N]`. A command ending in ` &` runs in the background until the page ends.
- A ```` ```python ```` block without a title runs as a script (`python -`) and must exit 0.
- Every other block is illustration.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import yaml

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
TITLE = re.compile(r"""\btitle=(?:"([^"]*)"|'([^']*)'|(\S+))""")
EXIT = re.compile(r"^\[exit (\d+)\]$")
PYTHON = ("python", "py")
COMMAND_TIMEOUT_S = 120.0
STOP_WAIT_S = 10.0


class ExampleError(Exception):
    """A page whose examples are written wrongly, or one of them did not do what it shows."""


@dataclass(frozen=True)
class Block:
    language: str
    title: str | None
    body: str
    line: int  # of the opening fence, 1-based


@dataclass(frozen=True)
class WriteFile:
    path: str
    text: str
    line: int


@dataclass(frozen=True)
class Command:
    command: str
    expected: tuple[str, ...]
    exit_code: int
    background: bool
    line: int  # of the `$ ` prompt


@dataclass(frozen=True)
class Script:
    code: str
    line: int


Step = WriteFile | Command | Script


@dataclass
class Page:
    path: str  # as the messages name it, e.g. docs/index.md
    requires: list[str] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)


def front_matter(text: str, where: str = "page") -> dict:
    """The YAML between a first line `---' and the next `---' ({} without one)."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}
    for end, line in enumerate(lines[1:], start=1):
        if line.strip() in ("---", "..."):
            meta = yaml.safe_load("\n".join(lines[1:end])) or {}
            if not isinstance(meta, dict):
                raise ExampleError(f"{where}:1: the front matter is not a mapping")
            return meta
    raise ExampleError(f"{where}:1: the front matter has no closing `---`")


def blocks(text: str) -> list[Block]:
    """Every fenced code block, also indented ones (in a list item or an admonition)."""
    found, lines, at = [], text.splitlines(), 0
    while at < len(lines):
        opening = FENCE.match(lines[at])
        if opening is None:
            at += 1
            continue
        indent, fence = opening["indent"], opening["fence"]
        info = opening["info"].strip().strip("{}").strip()
        words = info.split()
        language = words[0].lstrip(".") if words and "=" not in words[0] else ""
        title = TITLE.search(info)
        body, end = [], at + 1
        while end < len(lines):
            line = lines[end]
            closing = line.strip()
            if closing.startswith(fence[0] * len(fence)) and set(closing) == {fence[0]}:
                break
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            end += 1
        found.append(Block(language, next((g for g in title.groups() if g is not None), None)
                           if title else None, "\n".join(body) + ("\n" if body else ""), at + 1))
        at = end + 1
    return found


def console(block: Block, where: str) -> list[Command]:
    """The commands of a console block with the lines each must print."""
    commands: list[Command] = []
    lines = block.body.splitlines()
    at = 0
    while at < len(lines):
        line = lines[at]
        if not line.strip():
            at += 1
            continue
        if not line.startswith("$ "):
            raise ExampleError(f"{where}:{block.line + 1 + at}: output without a command before "
                               f"it (a command starts with `$ `): {line!r}")
        start, command = at, line[2:]
        while command.endswith("\\") and at + 1 < len(lines):  # continued on the next line
            at += 1
            command = command[:-1].rstrip() + " " + lines[at].strip()
        at += 1
        expected = []
        while at < len(lines) and not lines[at].startswith("$ "):
            if lines[at].strip():
                expected.append(lines[at].strip())
            at += 1
        exit_code = 0
        if expected and EXIT.match(expected[-1]):
            exit_code = int(EXIT.match(expected.pop())[1])
        command = command.strip()
        background = command.endswith(" &") and not command.endswith("&&")
        if background:
            command = command[:-1].rstrip()
        commands.append(Command(command, tuple(expected), exit_code, background,
                                block.line + 1 + start))
    return commands


def steps(text: str, where: str) -> list[Step]:
    out: list[Step] = []
    for block in blocks(text):
        if block.title:
            path = PurePosixPath(block.title)
            if path.is_absolute() or ".." in path.parts:
                raise ExampleError(f"{where}:{block.line}: the file `{block.title}` is not "
                                   "inside the scratch directory")
            out.append(WriteFile(block.title, block.body, block.line))
        elif block.language == "console":
            out += console(block, where)
        elif block.language in PYTHON:
            out.append(Script(block.body, block.line))
    return out


def parse_page(path: Path, name: str) -> Page:
    text = path.read_text(encoding="utf-8")
    requires = front_matter(text, name).get("requires") or []
    if isinstance(requires, str):
        requires = [requires]
    return Page(name, list(requires), steps(text, name))


# ---------------------------------------------------------------- matching


def pattern(expected: str) -> re.Pattern[str]:
    """An expected line as a search pattern: `...` matches any text, whitespace any
    whitespace."""
    parts = []
    for piece in expected.strip().split("..."):
        words = piece.split()
        text = r"\s+".join(re.escape(w) for w in words)
        if piece[:1].isspace() and words:
            text = r"\s*" + text
        if piece[-1:].isspace() and words:
            text += r"\s*"
        parts.append(text)
    return re.compile(".*".join(parts))


def unmatched(expected: tuple[str, ...] | list[str], output: str) -> int | None:
    """The index of the first expected line not found, in order, in `output' (None: all are);
    each expected line takes one output line."""
    lines = output.splitlines()
    at = 0
    for index, line in enumerate(expected):
        if line.strip() == "...":  # a line of its own: any number of lines, also none
            continue
        wanted = pattern(line)
        while at < len(lines) and not wanted.search(lines[at]):
            at += 1
        if at == len(lines):
            return index
        at += 1
    return None


def failure(page: Page, step: Command, exit_code: int, output: str, missing: int | None) -> str:
    """What a failed command shows: the page, the line, the command, expected and actual."""
    if exit_code != step.exit_code:
        why = f"exited {exit_code}, expected {step.exit_code}"
    else:
        why = "did not print the expected lines"
    shown = []
    for index, line in enumerate(step.expected):
        mark = ">>" if index == missing else "  "
        shown.append(f"  {mark} {line}" + ("   <- not found (in this order)" if mark == ">>" else ""))
    if step.exit_code:
        shown.append(f"     [exit {step.exit_code}]")
    actual = [f"   | {line}" for line in output.splitlines()] or ["   (nothing)"]
    return "\n".join([f"{page.path}:{step.line}: $ {step.command}", f"  {why}",
                      "  expected:", *(shown or ["     (no lines)"]), "  actual output:", *actual])


# ---------------------------------------------------------------- running


def environment(scratch: Path, bin_dir: Path, base: dict[str, str],
                extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a page: no STEEPY_* / STEEP_* from outside, HOME the scratch
    directory, steepy's bin directory first on PATH, then what the page's components need.
    Python may write bytecode, as it does for a reader: with PYTHONDONTWRITEBYTECODE from
    outside, every steepy process of every page compiled each module changed since its last
    .pyc again (in a fresh checkout all of steepy's: 0.85 s instead of 0.65 s for a `steepy
    run` of one chain)."""
    env = {k: v for k, v in base.items()
           if not k.startswith(("STEEPY_", "STEEP_")) and k != "PYTHONDONTWRITEBYTECODE"}
    env["HOME"] = str(scratch)
    env["PATH"] = f"{bin_dir}{os.pathsep}{base.get('PATH', '')}"
    env.update(extra or {})
    return env


@dataclass
class Run:
    """One page's examples running in `scratch'."""

    page: Page
    scratch: Path
    env: dict[str, str]
    background: list[tuple[subprocess.Popen, Path]] = field(default_factory=list)

    def all(self) -> None:
        try:
            for step in self.page.steps:
                self.step(step)
        finally:
            self.stop_background()

    def step(self, step: Step) -> None:
        if isinstance(step, WriteFile):
            target = self.scratch / step.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(step.text, encoding="utf-8")
        elif isinstance(step, Script):
            self.script(step)
        elif step.background:
            self.start(step)
        else:
            self.command(step)

    def command(self, step: Command) -> None:
        try:
            done = subprocess.run(["bash", "-c", step.command], cwd=self.scratch, env=self.env,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, timeout=COMMAND_TIMEOUT_S,
                                  start_new_session=True)
        except subprocess.TimeoutExpired as e:
            output = (e.output or b"").decode(errors="replace")
            raise ExampleError(failure(self.page, step, -1, output, None)
                               + f"\n  (stopped after {COMMAND_TIMEOUT_S:.0f} s)") from None
        output = done.stdout.decode(errors="replace")
        missing = unmatched(step.expected, output)
        if done.returncode != step.exit_code or missing is not None:
            raise ExampleError(failure(self.page, step, done.returncode, output, missing))

    def script(self, step: Script) -> None:
        try:
            done = subprocess.run(["python", "-"], cwd=self.scratch, env=self.env,
                                  input=step.code.encode(), stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, timeout=COMMAND_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise ExampleError(f"{self.page.path}:{step.line}: the python block did not end "
                               f"within {COMMAND_TIMEOUT_S:.0f} s") from None
        if done.returncode != 0:
            output = done.stdout.decode(errors="replace")
            raise ExampleError("\n".join([
                f"{self.page.path}:{step.line}: the python block exited {done.returncode}",
                "  actual output:", *(f"   | {line}" for line in output.splitlines())]))

    def start(self, step: Command) -> None:
        log = self.scratch.parent / f"background-{step.line}.log"
        with open(log, "wb") as out:
            process = subprocess.Popen(["bash", "-c", step.command], cwd=self.scratch,
                                       env=self.env, stdin=subprocess.DEVNULL, stdout=out,
                                       stderr=subprocess.STDOUT, start_new_session=True)
        self.background.append((process, log))

    def stop_background(self) -> None:
        """SIGTERM to each background command's process group; SIGKILL after a while."""
        for process, _ in self.background:
            _signal(process, signal.SIGTERM)
        for process, _ in self.background:
            try:
                process.wait(STOP_WAIT_S)
            except subprocess.TimeoutExpired:
                _signal(process, signal.SIGKILL)
                process.wait(STOP_WAIT_S)

    def background_output(self) -> str:
        return "\n".join(f"background `{shlex.join(p.args[2:])}`:\n{log.read_text(errors='replace')}"
                         for p, log in self.background if log.exists())


def _signal(process: subprocess.Popen, which: int) -> None:
    try:
        os.killpg(process.pid, which)
    except ProcessLookupError:
        pass
