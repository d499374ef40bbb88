"""steepy: run scientific workflows of command-line tools (Steep-compatible).

The Python API (docs/guide/python-api.md): `steepy.connect(target)` to a server or a
database, `steepy.run(workflow)` with an engine in this process, and the types they return.
They are imported when first used, so that `import steepy.model` and the like stay quick."""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

# name -> the module that defines it
_LAZY = {name: "steepy.api" for name in (
    "Attempt", "Chain", "Client", "EngineFailed", "Event", "NotFound", "Refused", "Run",
    "Submission", "WaitTimeout", "connect", "run")}
_LAZY.update(InputError="steepy.errors", Problem="steepy.errors", SteepyError="steepy.errors",
             ClientError="steepy.http.client")

__all__ = sorted(_LAZY) + ["__version__"]

# (type checkers read the names from __init__.pyi: an import here would tie every wing
# to steepy.api)


def __getattr__(name: str) -> Any:
    """PEP 562: `steepy.connect` and the rest, imported on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'steepy' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
