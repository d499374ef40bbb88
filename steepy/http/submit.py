"""A POSTed workflow becomes a submission exactly as `steepy submit` makes one: parsed
(YAML or JSON), checked against the schema, the API version and every validation rule."""

from __future__ import annotations

from steepy.errors import InputError, Problem
from steepy.model.ids import unique_id
from steepy.documents.loading import parse_text, workflow_from_document
from steepy.model import Submission
from steepy.model.submission import MissingMacroError, collect_required_capabilities
from steepy.documents.validation import validate_workflow

NAME = "<request>"  # the "file" problems name


def build_submission(raw: bytes, services: dict, macros: dict) -> Submission:
    """The submission for a request body; InputError with every problem otherwise."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(Problem(f"not UTF-8 text (byte {e.start})", file=NAME)) from None
    if "\x00" in text:
        raise InputError(Problem("the body contains a NUL character", file=NAME))
    workflow, document = workflow_from_document(parse_text(text, NAME))
    problems = validate_workflow(workflow, macros=macros, services=services)
    if problems:
        raise document.fail(problems)
    try:
        capabilities = collect_required_capabilities(workflow, services, macros)
    except MissingMacroError as e:
        raise InputError(Problem(str(e), file=NAME)) from None
    return Submission(id=unique_id(), workflow=workflow, name=workflow.name,
                      priority=workflow.priority, required_capabilities=capabilities,
                      source=document.text)
