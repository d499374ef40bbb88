"""The YAML reference pages (workflows, services, macros) from the JSON Schemas in schemas/:
one section per object (a table of its keys: type, required, default, description) and one
per shared value type, linked to each other by anchors."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ref_markdown import code, generated_note, prose, table

# the word "default" in a description, and the value after it ("Default 0.", "(default: x)")
_WORD = r'(?:"[^"]*"|[^\s.;,)]+)'
_DEFAULT = re.compile(rf"\b[Dd]efault(?::| is)?\s+({_WORD}(?: {_WORD}){{0,2}}?)(?=\.\s|\.$|;|\)|,\s|$)")
_MARKED = re.compile(r"(\S+) \(default\)")  # "none (default)"


def anchor(name: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")


def described_default(node: dict) -> str:
    """The default of a key: the schema's `default', else the value its description names."""
    if "default" in node:
        return code(node["default"])
    text = node.get("description", "")
    match = _DEFAULT.search(text) or _MARKED.search(text)
    return match.group(1).strip(" :") if match else ""


@dataclass
class Section:
    name: str  # heading: a $defs name or a dotted path of an inline object
    node: dict
    anchor: str


@dataclass
class SchemaPage:
    """Renders one schema; `pages' maps the $id of every schema to its page's file name."""

    schema: dict
    pages: dict[str, str]
    sections: list[Section] = field(default_factory=list)

    def link(self, ref: str) -> str:
        """A link to the section of `ref' (`#/$defs/X', or a key inside X: `X.key')."""
        where, _, pointer = ref.partition("#")
        parts = pointer.strip("/").split("/")
        if parts[:1] != ["$defs"] or len(parts) < 2:
            raise ValueError(f"cannot link {ref}: only $refs into $defs are rendered")
        name = ".".join([parts[1], *[p for p in parts[2:] if p != "properties"]])
        page = "" if not where or where == self.schema.get("$id") else self.pages[where]
        return f"[{name}]({page}#{anchor(parts[1])})"

    def inline(self, path: str, node: dict) -> str:
        """An object declared in place: a section of its own after its parent's."""
        section = Section(path, node, anchor(path))
        self.sections.append(section)
        return f"object ([{path}](#{section.anchor}))"

    def type_of(self, node: Any, path: str) -> str:
        if not isinstance(node, dict):
            return "any"
        if "$ref" in node:
            return self.link(node["$ref"]) + _limits(node)
        if "const" in node:
            return code(node["const"])
        if "enum" in node:
            return "one of " + ", ".join(code(v) for v in node["enum"])
        if "if" in node and ("then" in node or "else" in node):
            parts = [self.type_of(node[k], path) for k in ("then", "else") if k in node]
            return " or ".join(dict.fromkeys(parts))
        for key in ("anyOf", "oneOf"):
            choices = [c for c in node.get(key, []) if set(c) - {"description", "required"}]
            if choices:
                return " or ".join(self.type_of(c, path) for c in choices)
        kinds = node.get("type")
        if kinds is None:
            return "object" if "properties" in node else "any"
        kinds = [kinds] if isinstance(kinds, str) else kinds
        return " or ".join(self._kind(k, node, path) for k in kinds) + _limits(node)

    def _kind(self, kind: str, node: dict, path: str) -> str:
        if kind == "array":
            return "list of " + self.type_of(node["items"], path) if "items" in node else "list"
        if kind == "object" and "properties" in node:
            return self.inline(path, node)
        if kind == "object" and isinstance(node.get("additionalProperties"), dict):
            names = self.type_of(node.get("propertyNames", {"type": "string"}), path)
            return f"map of {names} to {self.type_of(node['additionalProperties'], path)}"
        return kind

    def object_section(self, section: Section) -> list[str]:
        node, required = section.node, set(section.node.get("required", []))
        rows = []
        for key, value in node["properties"].items():
            value = value if isinstance(value, dict) else {}
            rows.append([code(key), self.type_of(value, f"{section.name}.{key}"),
                         "yes" if key in required else "", described_default(value),
                         prose(value.get("description", ""))
                         + (" (deprecated)" if value.get("deprecated") else "")])
        out = [table(["Key", "Type", "Required", "Default", "Description"], rows)]
        out += self._rules(node)
        return out

    def _rules(self, node: dict) -> list[str]:
        rules = []
        for key in ("oneOf", "anyOf"):
            keys = [c["required"] for c in node.get(key, []) if set(c) <= {"required", "description"}]
            if keys:
                word = "Exactly one" if key == "oneOf" else "At least one"
                rules.append(f"{word} of " + ", ".join(code(k[0]) for k in keys if k) + " is given.")
        chosen = [(c["if"]["properties"], c["then"]) for c in node.get("allOf", [])
                  if "if" in c and "then" in c and "properties" in c["if"]]
        for condition, then in chosen:
            key, value = next(iter(condition.items()))
            rules.append(f"- With `{key}: {value.get('const')}`: {self.type_of(then, '')}.")
        if "minProperties" in node:
            rules.append(f"At least {node['minProperties']} key(s) are given.")
        if "maxProperties" in node:
            rules.append(f"At most {node['maxProperties']} key(s) are given.")
        if node.get("additionalProperties") is False:
            rules.append("No other keys are allowed.")
        return ["\n".join(rules)] if rules else []

    def render(self) -> str:
        schema = self.schema
        title = schema.get("title", "Schema")
        out = [f"# {title}", generated_note(f"schemas/ ({schema.get('$id', '')})"),
               prose(schema.get("description", ""))]
        self.sections = [Section(title, schema, "document")] if "properties" in schema else []
        if not self.sections:
            out.append(f"A file holds {self._document(schema, title)}.")
        self.sections += [Section(name, node, anchor(name))
                          for name, node in schema.get("$defs", {}).items()]
        done = 0
        while done < len(self.sections):  # inline objects are appended while rendering
            section = self.sections[done]
            done += 1
            out += [f"## {section.name} {{#{section.anchor}}}"]
            if section.node is not schema and section.node.get("description"):
                out.append(prose(section.node["description"]))
            if "properties" in section.node:
                out += self.object_section(section)
            else:
                out.append(f"Type: {self.type_of(section.node, section.name)}.")
        return "\n\n".join(p for p in out if p) + "\n"

    def _document(self, schema: dict, title: str) -> str:
        one, many = schema.get("else"), schema.get("then", {}).get("items")
        if one is not None and one == many:
            return f"one {self.type_of(one, title)} or a list of them"
        return self.type_of(schema, title)


def _limits(node: dict) -> str:
    limits = []
    if "minimum" in node:
        limits.append(f"≥ {node['minimum']}")
    if "maximum" in node:
        limits.append(f"≤ {node['maximum']}")
    if node.get("minLength") == 1:
        limits.append("not empty")
    if "minItems" in node:
        limits.append(f"at least {node['minItems']}")
    if "maxItems" in node:
        limits.append(f"at most {node['maxItems']}")
    if node.get("uniqueItems"):
        limits.append("no duplicates")
    return f" ({', '.join(limits)})" if limits else ""


def keys_of(schema: dict) -> set[str]:
    """Every key a document of this schema may have, at any depth (for tests)."""
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            found.update(node.get("properties", {}))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return found
