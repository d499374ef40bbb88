"""What the endpoints share: the registry, services and macros, and the engine of this
process (if it runs one) to wake after a change."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from steepy.engine.changes import watcher_of
from steepy.engine.feed import Feed
from steepy.registry import ReadViews, Registry, Requests

if TYPE_CHECKING:
    from steepy.documents.validation_services import Runtimes
    from steepy.engine.engine import Changed, Engine

DEFAULT_POST_MAX_SIZE = 10 * 1024 * 1024


@dataclass
class ApiContext:
    registry: Registry
    services: dict[str, Any] = field(default_factory=dict)
    macros: dict[str, Any] = field(default_factory=dict)
    engine: "Engine | None" = None  # None: an API-only node; other processes run the work
    log_dir: Path | None = Path("logs/processchains")
    log_group_by_prefix: int = 0
    token: str | None = None
    post_max_size: int = DEFAULT_POST_MAX_SIZE
    steep_ui: Path | None = None  # a build of Steep's web UI, served on Steep's page routes
    base_path: str = ""  # http.basePath: every route below this prefix
    allow_routes: str | None = None  # http.allowRoutes: only the routes it matches are served
    agent_max_age_s: float = 10.0  # agents silent for longer are not listed
    cancel_wait_s: float = 2.0  # how long a cancel waits to report the final status (Steep: 2 s)
    loop: asyncio.AbstractEventLoop | None = None  # the loop the engine runs in
    stopping: asyncio.Event = field(default_factory=asyncio.Event)  # ends live streams
    views: ReadViews = field(init=False)
    requests: Requests = field(init=False)
    feed: Feed = field(init=False)
    _tasks: set = field(default_factory=set, init=False, repr=False)

    def __post_init__(self) -> None:
        self.views = self.registry.views
        self.requests = self.registry.requests
        self.feed = Feed(self.views, watcher_of(self.registry.db))  # the engine's watcher too

    def runtimes(self) -> "Runtimes":
        """The runtimes a posted workflow's services may use: those of this server's engine,
        else (an API-only server) of the plugins `steepy serve' loaded."""
        from steepy.plugins.pluginset import serving

        return serving(self.engine).runtimes()

    def _tell_engine(self, what: "Changed") -> None:
        """`Engine.changed(what)` in the engine's loop (endpoints run in worker threads)."""
        engine, loop = self.engine, self.loop
        if engine is None or loop is None or loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            engine.changed(what)
        else:
            loop.call_soon_threadsafe(engine.changed, what)

    def submitted(self) -> None:
        """A submission was stored here: let the engine look for work now."""
        self._tell_engine("submissions")

    def wake_scheduler(self) -> None:
        """Chains changed (cancelled, retried, reprioritised): let the scheduler look now."""
        self._tell_engine("chains")

    def schedules_changed(self) -> None:
        """A schedule was added, paused, resumed or removed: the engine looks again now."""
        self._tell_engine("schedules")

    def retried(self) -> None:
        """A finished submission is RUNNING again without a controller: the engine adopts
        it when it next looks for work, which this makes happen now."""
        self.submitted()
