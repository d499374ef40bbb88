"""A workflow document becomes a submission: read, checked against its services, macros and
the runtimes steepy has, and given an id. The command line (`steepy submit`, `run`, `serve
--submit`) and the HTTP API (`POST /workflows`, schedules) make submissions only here, so a
workflow is accepted or refused the same way wherever it comes from. Nothing is stored."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from steepy.documents.checking import check_workflow
from steepy.documents.loading import Document
from steepy.documents.validation_services import Runtimes
from steepy.errors import InputError, Problem
from steepy.model import Submission
from steepy.model.ids import unique_id
from steepy.model.submission import MissingMacroError, collect_required_capabilities


def submission_from(document: Document, services: Mapping, macros: Mapping,
                    runtimes: Runtimes | Iterable[str] | None) -> Submission:
    """The submission of the workflow in `document` (from `read_file` or `parse_text`);
    InputError with every problem (file:line:column and JSON path) otherwise. Services'
    runtimes are checked against `runtimes` (None: not checked)."""
    workflow = check_workflow(document, services, macros, runtimes)
    try:
        capabilities = collect_required_capabilities(workflow, services, macros)
    except MissingMacroError as e:
        raise InputError(Problem(str(e), file=document.file)) from None
    return Submission(id=unique_id(), workflow=workflow, name=workflow.name,
                      priority=workflow.priority, required_capabilities=capabilities,
                      source=document.text)
