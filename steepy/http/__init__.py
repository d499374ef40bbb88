"""steepy's HTTP API: Steep's endpoints (reference section 8) plus retry, events and a live
stream of a submission's timeline, served by FastAPI on uvicorn next to the engine.

`create_app(context)` builds the application; `steepy serve` runs it (see server.py);
`client.py` is what the CLI's `--server` mode talks through. The two names are imported when
first used: a `--server` command imports the client, not FastAPI and the whole server
(1 s of imports).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from steepy import lazy_attributes

if TYPE_CHECKING:
    from steepy.http.app import create_app
    from steepy.http.context import ApiContext

__getattr__, __dir__ = lazy_attributes(globals(), {"create_app": "steepy.http.app",
                                                   "ApiContext": "steepy.http.context"})

__all__ = ["ApiContext", "create_app"]
