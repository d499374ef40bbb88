"""Markdown pieces the generated reference pages share: tables and inline code."""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Sequence


_CODE = re.compile(r"(`+).*?\1")  # a code span: tables leave a `|' inside it alone


def cell(text: Any) -> str:
    """One table cell: no line breaks, `|' escaped outside code spans."""
    flat, out, at = " ".join(str(text).split()), [], 0
    for span in _CODE.finditer(flat):
        out += [flat[at:span.start()].replace("|", "\\|"), span.group()]
        at = span.end()
    return "".join(out) + flat[at:].replace("|", "\\|")


def prose(text: str) -> str:
    """Plain text from a schema or docstring, safe in Markdown: no raw HTML, no emphasis."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace(
        "*", "\\*")


def code(value: Any) -> str:
    """`value' as inline code (JSON for anything but a string); backticks inside are kept by
    using a longer fence."""
    text = value if isinstance(value, str) else json.dumps(value)
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def generated_note(source: str) -> str:
    return f"<!-- generated from {source} by docs/hooks at build time; do not edit -->"
