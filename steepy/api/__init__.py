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
- `errors.py`: `NotFound`, `Refused`, `WaitTimeout`, `EngineFailed`.
"""

from __future__ import annotations

from steepy.api.chain import Attempt, Chain, Run
from steepy.api.client import Client, connect
from steepy.api.errors import EngineFailed, NotFound, Refused, WaitTimeout
from steepy.api.event import Event
from steepy.api.inprocess import run
from steepy.api.submission import Submission

__all__ = ["Attempt", "Chain", "Client", "EngineFailed", "Event", "NotFound", "Refused", "Run",
           "Submission", "WaitTimeout", "connect", "run"]
