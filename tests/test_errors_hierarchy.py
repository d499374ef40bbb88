"""Every error steepy defines is a SteepyError, so callers can tell steepy's own errors
(reported in words) from bugs and from other libraries' errors."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import steepy
from steepy.errors import SteepyError


def test_every_steepy_exception_is_a_steepy_error() -> None:
    outside = []
    for info in pkgutil.walk_packages(steepy.__path__, "steepy."):
        if ".migrations" in info.name or info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (inspect.isclass(value) and issubclass(value, BaseException)
                    and value.__module__ == module.__name__ and not issubclass(value, SteepyError)):
                outside.append(f"{module.__name__}.{name}")
    assert outside == []
