"""The steepy.yaml reference page from the configuration model (steepy.config.model): every
key with its type, default, environment variable and the comment beside it in the model's
source, one table per group; the settings of steepy's own runtimes; Steep's keys that steepy
reads but does not act on."""

from __future__ import annotations

import ast
import inspect
import io
import re
import textwrap
import tokenize
import types
import typing
from typing import Any

from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from ref_markdown import code, generated_note, prose, table

# validators of steepy.config.values / model -> the kind of value they accept
_VALIDATED = {
    "duration_ms": "duration (`5s`, `250ms`, `1m 30s`)",
    "parse_size": "size (bytes, or `10 MB`, `10MiB`, `512k`)",
    "_capabilities": "list of names (or one comma-separated string)",
    "_paths": "file, folder or glob, or a list of them",
    "string_list": "list of strings (one string: a list of one)",
    "_quartz": "Quartz cron expression",
    "_webhook_url": "http:// or https:// URL",
    "_event_pattern": "event pattern",
    "database_url": "database URL",
}
_QUOTED = re.compile(r"`([^`'\n]*)'")  # the model's comments quote `like this'


def markdown_quotes(text: str) -> str:
    return _QUOTED.sub(r"`\1`", text)


def comments(cls: type) -> dict[str, str]:
    """Field name -> the comment lines right above its declaration and the comment at its
    end, from the class's source."""
    source = textwrap.dedent(inspect.getsource(cls))
    lines = source.splitlines()
    trailing: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT and token.line.strip() != token.string:
            trailing[token.start[0]] = token.string.lstrip("#").strip()
    found: dict[str, str] = {}
    for node in ast.parse(source).body[0].body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        above, row = [], node.lineno - 2
        while row >= 0 and lines[row].strip().startswith("#"):
            above.insert(0, lines[row].strip().lstrip("#").strip())
            row -= 1
        ends = [trailing[n] for n in range(node.lineno, node.end_lineno + 1) if n in trailing]
        text = " ".join(above + ends).replace("# type: ignore[valid-type]", "")
        found[node.target.id] = re.sub(r"\s*type: ignore\[[\w-]+\]", "", text).strip()
    return found


def type_name(annotation: Any, metadata: list[Any] = ()) -> str:
    for item in metadata:
        func = getattr(item, "func", None)
        names = [getattr(func, "__name__", "")]
        names += list(getattr(getattr(func, "__code__", None), "co_names", ()))  # a lambda
        for name in names:
            if name in _VALIDATED:
                return _VALIDATED[name]
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return type_name(args[0], list(annotation.__metadata__))
    if origin in (typing.Union, types.UnionType):
        kinds = [type_name(a) for a in args if a is not type(None)]
        return " or ".join(dict.fromkeys(kinds))
    if origin is typing.Literal:
        return "one of " + ", ".join(code(a) for a in args)
    if origin is list:
        return "list of " + type_name(args[0]) if args else "list"
    if origin is dict:
        return f"map of {type_name(args[0])} to {type_name(args[1])}"
    if isinstance(annotation, type) and hasattr(annotation, "model_fields"):
        return "object (its keys below)"
    return {int: "integer", str: "string", bool: "boolean", float: "number"}.get(
        annotation, getattr(annotation, "__name__", str(annotation)))


def default_of(info: FieldInfo) -> str:
    if info.default is not PydanticUndefined:
        if info.default is None:
            return "none"
        return code(info.default) if info.default != "" else '`""` (empty)'
    if info.default_factory is not None:
        return code(info.default_factory())
    return ""  # required


def _section_class(annotation: Any, base: type) -> type | None:
    return annotation if isinstance(annotation, type) and issubclass(annotation, base) else None


def _listed_class(annotation: Any, base: type) -> type | None:
    if typing.get_origin(annotation) is list:
        return _section_class(typing.get_args(annotation)[0], base)
    return None


class ConfigPage:
    """Renders the model below `root' (steepy.config.model.Config)."""

    def __init__(self, root: type, base: type, leaves: dict, env_prefix: str = "STEEPY_"):
        self.root, self.base, self.leaves, self.prefix = root, base, leaves, env_prefix
        self.out: list[str] = []
        self.keys: list[str] = []  # every key rendered (dotted; entries of lists as `x[].y')

    def variable(self, key: str) -> str:
        if key in self.leaves or key.startswith("runtimes."):
            return code(self.prefix + key.upper().replace(".", "_"))
        return ""

    def group(self, cls: type, prefix: str, title: str, intro: str = "") -> None:
        notes = comments(cls)
        rows, below = [], []
        for name, info in cls.model_fields.items():
            key = prefix + (info.alias or name)
            inner = _section_class(info.annotation, self.base)
            listed = _listed_class(info.annotation, self.base)
            if inner is not None:
                below.append((inner, key + ".", f"`{key}`", notes.get(name, "")))
                continue
            if listed is not None:
                below.append((listed, key + "[].", f"`{key}` (a list)", notes.get(name, "")))
            self.keys.append(key)
            rows.append([code(key), type_name(info.annotation, info.metadata),
                         default_of(info) if not info.is_required() else "required",
                         self.variable(key), prose(markdown_quotes(notes.get(name, "")))])
        doc = markdown_quotes(prose(inspect.cleandoc(cls.__doc__ or ""))) if cls.__doc__ else ""
        if cls.__doc__ == self.base.__doc__ and cls is not self.base:
            doc = ""  # inherited, says nothing of this group
        self.out.append(f"## {title}")
        self.out += [p for p in (markdown_quotes(prose(intro)), doc) if p]
        if rows:
            self.out.append(table(["Key", "Type", "Default", "Variable", "Meaning"], rows))
        for inner, key, heading, note in below:
            self.group(inner, key, heading, note)


def render(root: type, base: type, leaves: dict, runtimes: dict[str, type],
           unimplemented: tuple[str, ...], file_name: str) -> tuple[str, list[str]]:
    page = ConfigPage(root, base, leaves)
    page.out = [
        f"# Configuration: `{file_name}`",
        generated_note("steepy/config/model.py"),
        f"Every key of `{file_name}` that steepy reads, with its default. Keys are Steep's "
        "names (`steep.` in front is allowed); a dotted key below is a nested YAML object "
        "(`agent.instances` is `agent:` then `instances:`). The variable of a key overrides "
        "the file (`STEEP_` instead of `STEEPY_` works too; its value is read as YAML). "
        "[The configuration guide](../guide/configuration.md) shows how to use them.",
    ]
    page.group(root, "", "Keys", "")
    for name, cls in runtimes.items():
        page.group(cls, f"runtimes.{name}.", f"`runtimes.{name}`",
                   f"The settings of the runtime `{name}'.")
    page.out.append("## Steep's keys that steepy ignores")
    page.out.append(
        "steepy reads these keys of Steep's configuration but does not act on them; each one "
        "in a file gives a warning: " + ", ".join(code(k) for k in unimplemented) + ".")
    return "\n\n".join(page.out) + "\n", page.keys


def steepy_page() -> tuple[str, list[str]]:
    """The page for steepy's own model, and the keys it lists."""
    from steepy.config.model import FILE_NAME, LEAVES, UNIMPLEMENTED, Config, Section
    from steepy.runtimes import BUILTIN, RuntimeSettings, settings_class

    runtimes = {name: settings_class(r) for name, r in sorted(BUILTIN.items())
                if settings_class(r) is not RuntimeSettings}
    return render(Config, Section, LEAVES, runtimes, UNIMPLEMENTED, FILE_NAME)
