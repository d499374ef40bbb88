# What type checkers see of `steepy` (the module imports these lazily, on first use).
from typing import Any, Callable

from steepy.api import (Attempt as Attempt, Chain as Chain, Client as Client,
                        EngineFailed as EngineFailed, Event as Event, NotFound as NotFound,
                        Refused as Refused, Run as Run, Submission as Submission,
                        WaitTimeout as WaitTimeout, connect as connect, run as run)
from steepy.errors import InputError as InputError, Problem as Problem, SteepyError as SteepyError
from steepy.registry.failures import DatabaseUnavailable as DatabaseUnavailable
from steepy.http.client import ClientError as ClientError

__version__: str
__all__: list[str]


def lazy_attributes(namespace: dict[str, Any], homes: dict[str, str]) -> tuple[
    Callable[[str], Any], Callable[[], list[str]]]: ...
