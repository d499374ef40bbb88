"""The error types steepy raises for bad input.

Every problem with a user's file ends up as a `Problem` (where and what) inside an
`InputError`, so the CLI and the HTTP API can print all of them at once without a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass, field

PROBLEMS_HEADER = "X-Steepy-Problems"
"""The header of an HTTP error answer that lists its located problems (`Problem.to_json`) as
JSON (steepy only): the server writes it, the client reads it."""


class SteepyError(Exception):
    """Base class of every error steepy raises on purpose."""


@dataclass
class Problem:
    """One thing wrong with an input: what, and where (file, line, column, JSON path)."""

    message: str
    path: str = ""
    file: str | None = None
    line: int | None = None
    column: int | None = None
    # Steep's own location list, e.g. ["workflow", "actions[0](execute cp)"]
    steep_path: list[str] = field(default_factory=list)

    def location(self) -> str:
        where = self.file or "<input>"
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return where

    def __str__(self) -> str:
        text = self.location() + ": "
        if self.path:
            text += f"{self.path}: "
        return text + self.message

    def to_json(self) -> dict:
        out: dict = {"message": self.message}
        for key in ("path", "file", "line", "column"):
            value = getattr(self, key)
            if value not in (None, ""):
                out[key] = value
        return out


class InputError(SteepyError):
    """One or more problems with a user's input; nothing was stored or run."""

    def __init__(self, problems: list[Problem] | Problem | str):
        if isinstance(problems, str):
            problems = [Problem(problems)]
        elif isinstance(problems, Problem):
            problems = [problems]
        self.problems: list[Problem] = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))

    def within(self, path: tuple | list) -> "InputError":
        """Put `path` (the enclosing location) in front of every problem's JSON path."""
        prefix = json_path(path)
        if prefix:
            for p in self.problems:
                sep = "" if not p.path or p.path.startswith("[") else "."
                p.path = prefix + sep + p.path
        self.args = ("\n".join(str(p) for p in self.problems),)
        return self


def json_path(parts: tuple | list) -> str:
    """Render path parts like ("actions", 2, "retries") as `actions[2].retries`."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += ("." if text else "") + str(part)
    return text
