"""The workflow handed to `Client.submit` or `steepy.run`: a file, YAML or JSON text, or a
dict. (Their `vars` are `steepy.documents.variables`' to check and set.)"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, Union

from steepy.documents.loading import Document, parse_text, read_file
from steepy.errors import InputError, Problem

Workflow = Union[str, "os.PathLike[str]", Mapping[str, Any]]
NAME = "<workflow>"  # where the problems of a workflow given as text or a dict are


def workflow_document(workflow: Workflow) -> Document:
    """The workflow as a document. A path (a `Path`, or a string of one line that does not
    start with `{`) is read; other strings are YAML or JSON text; a dict is the workflow
    itself. Bad input: InputError, located."""
    if isinstance(workflow, Mapping):
        return parse_text(json.dumps(workflow, indent=2, default=str), NAME)
    if isinstance(workflow, str) and not workflow.strip():  # (read as a path: the folder)
        raise InputError(Problem("the workflow is empty: give its file's path, its YAML or "
                                 "JSON text, or a dict", file="workflow"))
    if isinstance(workflow, os.PathLike) or (
            isinstance(workflow, str) and "\n" not in workflow
            and not workflow.lstrip().startswith("{")):
        return read_file(workflow)
    if isinstance(workflow, str):
        return parse_text(workflow, NAME)
    raise InputError(Problem("a workflow is a path, YAML or JSON text or a dict, not "
                             f"{type(workflow).__name__}", file="workflow"))

