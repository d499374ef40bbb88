"""The reference page of the timeline's events, rendered from the catalogue:
`python -m steepy.events docs/reference/events.md` writes it (without a file, prints it)."""

from __future__ import annotations

import sys

from steepy.events import EventKind, kinds

PAGE = "docs/reference/events.md"
COMMAND = f"python -m steepy.events {PAGE}"
_TYPES = {"str": "string", "int": "integer", "float": "number", "datetime": "time (ISO 8601)",
          "list[str]": "list of strings"}


def _type_words(annotation: str) -> str:
    return " or ".join(_TYPES.get(t.strip(), t.strip()) for t in annotation.split("|")
                       if t.strip() != "None")


def _anchor(kind: EventKind) -> str:
    return kind.value.replace(".", "").lower()  # as GitHub makes it of the heading


def markdown() -> str:
    """The page: an index by group, then each kind with its description and fields."""
    out = ["# Timeline events", "",
           f"<!-- generated from steepy/events/ by `{COMMAND}`; do not edit -->", "",
           "Every event of a timeline (`GET /workflows/ID/events`, `steepy events ID`), of the",
           "live feed (`GET /events`) and of a webhook's body has an `id`, a `time` and a",
           "`kind`, the `submissionId` and `chainId` it is about (when it is one), and the",
           "fields of its kind below. A field without a value is left out.", ""]
    for group in sorted({k.group for k in EventKind}):
        out.append(f"- {group}: " + ", ".join(f"[`{k}`](#{_anchor(k)})" for k in kinds(group)))
    for kind in EventKind:
        out += ["", f"## {kind}", "", kind.description, ""]
        if not kind.fields:
            out.append("No fields.")
            continue
        out += ["| Field | Type | Meaning |", "|---|---|---|"]
        out += [f"| `{s.name}` | {_type_words(s.type)}{'' if s.required else ', optional'} "
                f"| {s.doc} |" for s in kind.fields]
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    """`python -m steepy.events [FILE]`."""
    if argv:
        with open(argv[0], "w", encoding="utf-8") as page:
            page.write(markdown())
    else:
        sys.stdout.write(markdown())
    return 0
