"""The HTTP reference page from the OpenAPI document of steepy's FastAPI app: every path and
method with its parameters, request body and responses."""

from __future__ import annotations

import re
from typing import Any

from ref_markdown import code, generated_note, prose, table

METHODS = ("get", "head", "post", "put", "patch", "delete", "options")


def anchor(method: str, path: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", f"{method} {path}".lower()).strip("-")


class HttpPage:
    def __init__(self, document: dict) -> None:
        self.document = document
        self.schemas = document.get("components", {}).get("schemas", {})

    def type_of(self, schema: dict | None) -> str:
        if not schema:
            return ""
        if "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[-1]
            target = self.schemas.get(name, {})
            return self.type_of(target) if "enum" in target else name
        if "enum" in schema:
            return "one of " + ", ".join(code(v) for v in schema["enum"])
        for key in ("anyOf", "oneOf"):
            if key in schema:
                kinds = [self.type_of(s) for s in schema[key] if s.get("type") != "null"]
                return " or ".join(k for k in kinds if k)
        kind = schema.get("type", "")
        if kind == "array":
            return "list of " + (self.type_of(schema.get("items")) or "values")
        return kind

    def parameters(self, operation: dict) -> str:
        rows = []
        for p in operation.get("parameters", []):
            schema = p.get("schema", {})
            default = code(schema["default"]) if "default" in schema else ""
            rows.append([code(p["name"]), p.get("in", ""), self.type_of(schema),
                         "yes" if p.get("required") else "", default,
                         prose(p.get("description") or schema.get("description") or "")])
        if not rows:
            return ""
        return table(["Parameter", "In", "Type", "Required", "Default", "Description"], rows)

    def body(self, operation: dict) -> str:
        body = operation.get("requestBody")
        if not body:
            return ""
        kinds = ", ".join(code(k) for k in body.get("content", {}))
        required = "required" if body.get("required") else "optional"
        text = f"Request body ({required}): {kinds}."
        return text + (f" {prose(body['description'])}" if body.get("description") else "")

    def responses(self, operation: dict) -> str:
        rows = []
        for status, response in sorted(operation.get("responses", {}).items()):
            kinds = ", ".join(code(k) for k in response.get("content", {}))
            rows.append([code(status), prose(response.get("description", "")), kinds])
        return table(["Status", "Meaning", "Content"], rows) if rows else ""

    def operations(self) -> list[tuple[str, str, dict]]:
        return [(method, path, operation)
                for path, item in self.document.get("paths", {}).items()
                for method, operation in item.items() if method in METHODS]

    def render(self) -> str:
        info = self.document.get("info", {})
        out = ["# HTTP API", generated_note("the OpenAPI document of steepy/http/app.py"),
               info.get("description", "").strip(),
               "A running server serves this document as `GET /openapi.json`, and browsable at "
               "`/docs` and `/redoc`.",
               table(["Method", "Path", "What"], [
                   [method.upper(), f"[{code(path)}](#{anchor(method, path)})",
                    prose(op.get("summary", ""))] for method, path, op in self.operations()])]
        for method, path, operation in self.operations():
            out.append(f"## {method.upper()} {path} {{#{anchor(method, path)}}}")
            out.append(f"**{prose(operation.get('summary', ''))}**"
                       + (f" (tags: {', '.join(operation['tags'])})" if operation.get("tags")
                          else ""))
            out += [operation.get("description", "").strip(), self.parameters(operation),
                    self.body(operation), self.responses(operation)]
        return "\n\n".join(p for p in out if p) + "\n"


def steepy_document() -> dict:
    """The OpenAPI document of steepy's app, on a database in memory."""
    from steepy.http import ApiContext, create_app
    from steepy.registry import open_registry

    return create_app(ApiContext(open_registry("sqlite://"))).openapi()


def steepy_page() -> tuple[str, list[tuple[str, str]]]:
    """The page for steepy's API, and its (METHOD, path) operations."""
    page = HttpPage(steepy_document())
    return page.render(), [(m.upper(), p) for m, p, _ in page.operations()]
