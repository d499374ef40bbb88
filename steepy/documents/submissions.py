"""A workflow document becomes a submission: read, checked against its services, macros and
the runtimes steepy has, and given an id. The command line (`steepy submit`, `run`, `serve
--submit`) and the HTTP API (`POST /workflows`, schedules) make submissions only here, so a
workflow is accepted or refused the same way wherever it comes from. Nothing is stored."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from steepy.documents.checking import check_workflow
from steepy.documents.loading import Document
from steepy.documents.validation_services import Runtimes
from steepy.documents.inputfiles import InputBase, resolve_input_files
from steepy.documents.variables import GivenVars, apply_vars, blame
from steepy.errors import InputError, Problem
from steepy.model import Submission
from steepy.model.ids import unique_id
from steepy.model.submission import MissingMacroError, collect_required_capabilities


def submission_from(document: Document, services: Mapping, macros: Mapping,
                    runtimes: Runtimes | Iterable[str] | None,
                    given: GivenVars | None = None,
                    base: InputBase | None = None) -> Submission:
    """The submission of the workflow in `document` (from `read_file` or `parse_text`);
    InputError with every problem (file:line:column and JSON path) otherwise. Services'
    runtimes are checked against `runtimes` (None: not checked). `given`: values for its
    variables (steepy.documents.variables), kept with the submission. `base`: what relative
    constant input paths are resolved against (steepy.documents.inputfiles; None: they are
    left as written and not checked)."""
    workflow = check_workflow(document, services, macros, runtimes)
    problems: list[Problem] = []  # of the values given: told with every other one
    if given:
        def check(changed: Document):
            return check_workflow(changed, services, macros, runtimes)

        changed, usable, problems = apply_vars(document, given)  # names, defaults: where given
        try:
            workflow = check(changed)
        except InputError as e:
            try:
                blame(document, usable, check)  # the value to blame, where it was given
            except InputError as blamed:
                raise InputError(problems + blamed.problems) from None
            raise InputError(problems + e.problems) from None
    if base is not None:
        found = resolve_input_files(workflow, document.data, services, base, given, macros)
        problems += [p if p.file else document.locate(p) for p in found]
    if problems:
        raise InputError(problems)
    try:
        capabilities = collect_required_capabilities(workflow, services, macros)
    except MissingMacroError as e:
        raise InputError(Problem(str(e), file=document.file)) from None
    return Submission(id=unique_id(), workflow=workflow, name=workflow.name,
                      priority=workflow.priority, required_capabilities=capabilities,
                      source=document.text, vars=dict(given.values) if given else None)
