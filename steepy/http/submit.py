"""A POSTed workflow becomes a submission exactly as `steepy submit` makes one: parsed
(YAML or JSON), checked against the schema, the API version and every validation rule
(`steepy.documents.submissions`).

The body stays Steep's (the workflow alone). Values for the workflow's variables come in the
query parameter `vars`, a JSON object: `POST /workflows?vars={"size":3}` (URL-encoded);
their problems name the file `<vars>` and the variable as the path. JSON has no NaN or
Infinity (Python's reader would take them), `vars` nested more deeply than a document may
be is a problem too, and `vars` given twice is refused rather than one of them silently used
(`query_value`). A value no tool can take (a NUL character, a lone surrogate such as
`"\\ud800"`, a number too large to be finite) is refused with the workflow's problems
(steepy.documents.variables.apply_vars). Relative input paths are resolved against the
directory the query parameter `base` names (the client's: `steepy submit --server` sends
its working directory), else the server's working directory, and must exist there;
absolute ones are passed on unchecked, as Steep does: its agents may see files the server
does not (`InputBase.server`, steepy.documents.inputfiles)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from steepy.documents.inputfiles import InputBase
from steepy.documents.loading import parse_text
from steepy.documents.values import unusable_values
from steepy.documents.submissions import submission_from
from steepy.documents.validation_services import Runtimes
from steepy.documents.variables import GIVEN, GivenVars
from steepy.errors import InputError, Problem
from steepy.model import Submission

if TYPE_CHECKING:
    from starlette.datastructures import QueryParams

NAME = "<request>"  # the "file" problems name


def query_value(params: "QueryParams", name: str) -> str | None:
    """The query parameter `name` of a request (`request.query_params`, which keeps every
    value), None when absent; InputError when it is given more than once."""
    values = params.getlist(name)
    if len(values) > 1:
        raise InputError(Problem(f"the query parameter `{name}' is given {len(values)} times; "
                                 "give it once", file=GIVEN if name == "vars" else NAME))
    return values[0] if values else None


def _not_json(constant: str) -> None:
    """`NaN', `Infinity' and `-Infinity', which Python's JSON reader would take."""
    raise InputError(Problem(f"the query parameter `vars' is not JSON: {constant} is not a "
                             "finite number (JSON has no NaN or Infinity)", file=GIVEN))


def given_vars(text: str | None) -> GivenVars | None:
    """The query parameter `vars` (a JSON object); InputError otherwise."""
    if text is None:
        return None
    deep = Problem("the query parameter `vars' is nested too deeply", file=GIVEN)
    try:
        values = json.loads(text, parse_constant=_not_json)
    except json.JSONDecodeError as e:  # (where, as in a file: `vars' may be long)
        raise InputError(Problem(f"the query parameter `vars' is not JSON: {e.msg}",
                                 file=GIVEN, line=e.lineno, column=e.colno)) from None
    except RecursionError:  # too deep for the reader (and for what would store and run it)
        raise InputError(deep) from None
    if unusable_values(values, values=False):  # deeper than a document may be
        raise InputError(deep)
    if not isinstance(values, dict):
        raise InputError(Problem("the query parameter `vars' must be a JSON object of "
                                 "variable ids and values", file=GIVEN))
    return GivenVars.of(values)


def given_resume(text: str | None) -> bool | None:
    """The query parameter `resume` (`true` or `false`, extensions 15); InputError otherwise."""
    if text is None:
        return None
    if text.lower() not in ("true", "false"):
        raise InputError(Problem(f"the query parameter `resume' must be true or false, not "
                                 f"`{text}'", file=NAME))
    return text.lower() == "true"


BASE_PARAMETER = {  # (the OpenAPI of POST /workflows and POST /schedules)
    "name": "base", "in": "query", "required": False,
    "description": "The absolute directory the client submitted from: relative input paths "
                   "of the workflow are resolved against it, not against the server's working "
                   "directory (steepy's `submit --server` and `schedule add --server` send "
                   "their own)",
    "schema": {"type": "string"}}


def given_base(text: str | None) -> str | None:
    """The query parameter `base`: the absolute directory the client submitted from, that
    relative input paths are resolved against; InputError otherwise."""
    if text is None:
        return None
    if not text.startswith("/") or "\x00" in text:
        raise InputError(Problem(f"the query parameter `base' must be an absolute directory, "
                                 f"not `{text}'", file=NAME))
    return text


def build_submission(raw: bytes, services: dict, macros: dict, runtimes: Runtimes,
                     vars_text: str | None = None, given: GivenVars | None = None,
                     base: str | None = None) -> Submission:
    """The submission for a request body (and the query parameter `vars`, `vars_text`, or
    values read already, `given`; relative input paths against `base`, else the server's
    working directory); InputError with every problem otherwise. Its services' runtimes
    are checked against `runtimes' (`ApiContext.runtimes()`)."""
    given = given_vars(vars_text) if vars_text is not None else given
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(Problem(f"not UTF-8 text (byte {e.start})", file=NAME)) from None
    if "\x00" in text:
        raise InputError(Problem("the body contains a NUL character", file=NAME))
    return submission_from(parse_text(text, NAME), services, macros, runtimes, given,
                           InputBase.server(base))
