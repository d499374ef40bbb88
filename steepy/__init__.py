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
             ClientError="steepy.http.client", DatabaseUnavailable="steepy.registry.failures")

__all__ = sorted(_LAZY) + ["__version__"]

# (type checkers read the names from __init__.pyi: an import here would tie every wing
# to steepy.api)


def lazy_attributes(namespace: dict[str, Any], homes: dict[str, str]):
    """A package's PEP 562 `__getattr__` and `__dir__`: each name of `homes` (name -> the
    module that defines it) is imported on first use and then kept in `namespace` (the
    package's globals()). steepy's and steepy.api's names are found this way, so that
    `steepy --help` and `import steepy.model` do not load the API's client and engine."""
    import importlib

    def __getattr__(name: str) -> Any:
        module = homes.get(name)
        if module is None:
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(homes))

    return __getattr__, __dir__


__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
