"""steepy's HTTP API: Steep's endpoints (reference section 8) plus retry, events and a live
stream of a submission's timeline, served by FastAPI on uvicorn next to the engine.

`create_app(context)` builds the application; `steepy serve` runs it (see server.py);
`client.py` is what the CLI's `--server` mode talks through.
"""

from steepy.http.app import create_app
from steepy.http.context import ApiContext

__all__ = ["ApiContext", "create_app"]
