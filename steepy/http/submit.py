"""A POSTed workflow becomes a submission exactly as `steepy submit` makes one: parsed
(YAML or JSON), checked against the schema, the API version and every validation rule
(`steepy.documents.submissions`)."""

from __future__ import annotations

from steepy.documents.loading import parse_text
from steepy.documents.submissions import submission_from
from steepy.documents.validation_services import Runtimes
from steepy.errors import InputError, Problem
from steepy.model import Submission

NAME = "<request>"  # the "file" problems name


def build_submission(raw: bytes, services: dict, macros: dict,
                     runtimes: Runtimes) -> Submission:
    """The submission for a request body; InputError with every problem otherwise. Its
    services' runtimes are checked against `runtimes' (`ApiContext.runtimes()`)."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(Problem(f"not UTF-8 text (byte {e.start})", file=NAME)) from None
    if "\x00" in text:
        raise InputError(Problem("the body contains a NUL character", file=NAME))
    return submission_from(parse_text(text, NAME), services, macros, runtimes)
