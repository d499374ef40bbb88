"""The name a misspelt one was probably meant to be. Every `did you mean' comes from here:
services, parameters, action ids, unknown keys, variables, `--var' names and retry plugins
of a document; configuration keys, runtimes and event kinds. Each message words it in its
own sentence."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(name: str, options: Iterable[str]) -> str | None:
    """The option most like `name` (`inptus' -> `inputs'), None when none is close."""
    close = difflib.get_close_matches(name, [o for o in options if o != name], n=1)
    return close[0] if close else None


def suggest(name: str, options: Iterable[str]) -> str:
    """` Did you mean `x'?' to end a sentence with, or nothing."""
    close = closest(name, options)
    return f" Did you mean `{close}'?" if close else ""
