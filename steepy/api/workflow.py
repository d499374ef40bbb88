"""The workflow handed to `Client.submit` or `steepy.run`: a file, YAML or JSON text, or a
dict, with `vars` values set by id before it is checked."""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Mapping
from typing import Any, Union

from steepy.documents.loading import Document, parse_text, read_file
from steepy.errors import Problem

Workflow = Union[str, "os.PathLike[str]", Mapping[str, Any]]
NAME = "<workflow>"  # where the problems of a workflow given as text or a dict are


def workflow_document(workflow: Workflow, vars: Mapping[str, Any] | None = None) -> Document:
    """The workflow as a document. A path (a `Path`, or a string of one line that does not
    start with `{`) is read; other strings are YAML or JSON text; a dict is the workflow
    itself. Bad input: InputError, located."""
    if isinstance(workflow, Mapping):
        document = parse_text(json.dumps(workflow, indent=2, default=str), NAME)
    elif isinstance(workflow, os.PathLike) or (
            isinstance(workflow, str) and "\n" not in workflow
            and not workflow.lstrip().startswith("{")):
        document = read_file(workflow)
    elif isinstance(workflow, str):
        document = parse_text(workflow, NAME)
    else:
        raise TypeError(f"a workflow is a path, YAML text or a dict, not {type(workflow).__name__}")
    return with_vars(document, vars) if vars else document


def with_vars(document: Document, vars: Mapping[str, Any]) -> Document:
    """`document` with the values of its declared variables (`vars: [{id, value}]`) replaced;
    its text becomes the workflow as JSON (what is stored and shown as its source). An id
    the workflow does not declare is a problem at its `vars`."""
    data = copy.deepcopy(document.data)
    declared = data.get("vars") if isinstance(data, dict) else None
    entries = {entry.get("id"): entry for entry in declared or [] if isinstance(entry, dict)}
    problems = []
    for var_id, value in vars.items():
        if var_id in entries:
            entries[var_id]["value"] = value
            continue
        names = ", ".join(f"`{name}'" for name in entries) or "none"
        problems.append(Problem(f"no variable `{var_id}' is declared here, so it cannot be set "
                                f"(declared: {names})", path="vars" if declared else ""))
    if problems:
        raise document.fail(problems)
    return Document(data, document.file, document.positions,
                    json.dumps(data, indent=2, default=str))
