"""The generated reference pages, made at build time (an mkdocs hook, `hooks:` in mkdocs.yml):
reference/workflows.md, services.md and macros.md from the JSON Schemas in schemas/,
reference/configuration.md from the configuration model, reference/cli.md from the click app
and reference/http.md from the OpenAPI document. They are never files under docs/."""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
if str(HERE) not in sys.path:  # the generators beside this file
    sys.path.insert(0, str(HERE))

import ref_cli  # noqa: E402
import ref_config  # noqa: E402
import ref_http  # noqa: E402
import ref_schemas  # noqa: E402

SCHEMAS = {"workflow": "workflows.md", "service": "services.md", "macro": "macros.md"}


def schemas() -> dict[str, dict]:
    """The schema of each reference page (its file name -> the schema)."""
    return {page: json.loads((ROOT / "schemas" / f"{name}.schema.json").read_text())
            for name, page in SCHEMAS.items()}


def pages() -> dict[str, str]:
    """Every generated page: its path below docs/ -> its Markdown."""
    by_page = schemas()
    ids = {schema["$id"]: page for page, schema in by_page.items()}
    out = {f"reference/{page}": ref_schemas.SchemaPage(schema, ids).render()
           for page, schema in by_page.items()}
    out["reference/configuration.md"] = ref_config.steepy_page()[0]
    out["reference/cli.md"] = ref_cli.steepy_page()[0]
    out["reference/http.md"] = ref_http.steepy_page()[0]
    return out


def on_files(files, config):
    from mkdocs.exceptions import PluginError
    from mkdocs.structure.files import File

    for path, text in pages().items():
        if files.get_file_from_path(path) is not None:
            raise PluginError(f"docs/{path} is generated at build time (docs/hooks/reference.py);"
                              " remove the file")
        files.append(File.generated(config, path, content=text))
    return files
