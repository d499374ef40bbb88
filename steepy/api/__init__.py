"""steepy's Python API: `connect(target)` to a server or a database, `run(workflow)` with an
engine in this process, and the types they return (docs/guide/python-api.md).

- `client.py`: `connect` and `Client` (submit, submission, submissions, chain, services);
- `submission.py`, `chain.py`, `event.py`: `Submission`, `Chain` (with `Run`, `Attempt`) and
  `Event`, typed views of the API's JSON documents;
- `inprocess.py`: `run`, an engine in a thread of this process;
- `workflow.py`: a workflow given as a path, text or dict;
- `backends.py`, `local.py`, `remote.py`, `sse.py`: where the answers come from (a database,
  or a server over HTTP); the CLI's management commands use them too;
- `setup.py`: steepy.yaml, plugins, services and macros for local work;
- `errors.py`: `NotFound`, `Refused`, `WaitTimeout`, `EngineFailed`; `arguments.py` checks
  the plain arguments (`vars`, `status`, `agents`); `guard.py` turns a database that cannot
  be used into `DatabaseUnavailable` (steepy.registry.failures') with the CLI's message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from steepy import lazy_attributes

# name -> the module that defines it; imported on first use (`steepy list` uses the backends
# without loading the client, the in-process engine or asyncio)
_HOMES = {"Attempt": "steepy.api.chain", "Chain": "steepy.api.chain", "Run": "steepy.api.chain",
          "Client": "steepy.api.client", "connect": "steepy.api.client",
          "DatabaseUnavailable": "steepy.registry.failures",
          "EngineFailed": "steepy.api.errors", "NotFound": "steepy.api.errors",
          "Refused": "steepy.api.errors", "WaitTimeout": "steepy.api.errors",
          "Event": "steepy.api.event", "run": "steepy.api.inprocess",
          "Submission": "steepy.api.submission"}

__all__ = sorted(_HOMES)

__getattr__, __dir__ = lazy_attributes(globals(), _HOMES)

if TYPE_CHECKING:  # what type checkers see
    from steepy.api.chain import Attempt, Chain, Run  # noqa: F401
    from steepy.api.client import Client, connect  # noqa: F401
    from steepy.api.errors import EngineFailed, NotFound, Refused, WaitTimeout  # noqa: F401
    from steepy.registry.failures import DatabaseUnavailable  # noqa: F401
    from steepy.api.event import Event  # noqa: F401
    from steepy.api.inprocess import run  # noqa: F401
    from steepy.api.submission import Submission  # noqa: F401
