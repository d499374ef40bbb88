"""The plain arguments of the API's functions (`vars`, `status`, `agents`), checked before
they are used: a wrong one is an InputError that names it, as the command line names its
option, never a ValueError or TypeError from deep inside."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from steepy.errors import InputError, Problem
from steepy.model.submission import SubmissionStatus

if TYPE_CHECKING:
    from steepy.documents.variables import GivenVars


def given_vars(vars: Any) -> "GivenVars":
    """`vars`: a mapping of variable ids (strings) to JSON values (strings, numbers, lists,
    ...); every wrong id or value is one problem at `<vars>`, also those no workflow can use
    (a NUL character, a lone surrogate, NaN: steepy.documents.variables.given_problems), as
    the command line tells them, before anything is sent to a server."""
    from steepy.documents.values import unusable_values
    from steepy.documents.variables import GIVEN, TAKES, GivenVars, given_problems

    if vars is None:
        return GivenVars.of(None)
    if not isinstance(vars, Mapping):
        raise InputError(Problem("vars is a dict of variable ids and values, not "
                                 f"{type(vars).__name__}: e.g. {{\"who\": \"Ada\"}}",
                                 file=GIVEN))
    problems, usable = [], {}
    for name, value in vars.items():
        if not isinstance(name, str):
            problems.append(Problem(f"a variable id is a string, not {type(name).__name__} "
                                    f"`{name!r}'", file=GIVEN))
        elif unusable_values(value, values=False):  # before json.dumps runs out of stack
            problems.append(Problem("the value is nested too deeply", path=name, file=GIVEN))
        elif (plain := _as_json(value)) is _NOT_JSON:
            problems.append(Problem(f"{type(value).__name__} is not a value a workflow can "
                                    "use: " + TAKES + " (an object only where the "
                                    "variable's default value is one)",
                                    path=name, file=GIVEN))
        else:  # as JSON has it (a tuple is a list: its items are checked as a list's)
            usable[name] = plain
    problems += given_problems(GivenVars.of(usable))
    if problems:
        raise InputError(problems)
    return GivenVars.of(usable)


_NOT_JSON = object()


def _as_json(value: Any) -> Any:
    """`value` as JSON has it (a tuple a list, a key a string), or `_NOT_JSON`."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError, RecursionError):
        return _NOT_JSON


def status_name(status: Any) -> str | None:
    """A submission status (a `SubmissionStatus` or its name), or None for any."""
    if status is None:
        return None
    try:
        return str(SubmissionStatus(status))
    except ValueError:
        known = ", ".join(str(s) for s in SubmissionStatus)
        raise InputError(Problem(f"`{status}' is not one of {known}", file="status")) from None


_DEFAULT_AGENTS = "0 or None: the agent's instances in steepy.yaml, else one per core"


def agents_number(agents: Any) -> int | None:
    """How many chains run at once: None or 0 for the default (`agent.instances`, else one
    per core), else a positive number."""
    if agents is None:
        return None
    if isinstance(agents, bool) or not isinstance(agents, int):
        raise InputError(Problem(f"{agents!r} is not a number of agents: give an int, 1 or "
                                 f"more ({_DEFAULT_AGENTS})", file="agents"))
    if agents < 0:
        raise InputError(Problem(f"{agents} is not a number of agents: give 1 or more "
                                 f"({_DEFAULT_AGENTS})", file="agents"))
    return agents


def timeout_seconds(timeout: Any) -> float | None:
    """`wait(timeout)`: None (no limit) or a number of seconds, 0 or more."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout != timeout:
        raise InputError(Problem(f"{timeout!r} is not a number of seconds: give a number, e.g. "
                                 "30, or None to wait without a limit", file="timeout"))
    if timeout < 0:
        raise InputError(Problem(f"{timeout} is not a number of seconds: give 0 or more",
                                 file="timeout"))
    return float(timeout)
