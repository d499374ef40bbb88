"""How a page module declares its routes."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from starlette.routing import Route


def page(path: str, endpoint: Callable, *, negotiated: bool = True,
         methods: Sequence[str] = ("GET",)) -> Route:
    """A page route. `negotiated`: the API has the same path, and only a browser asking for
    HTML gets the page; otherwise the path is the UI's alone."""
    route = Route(path, endpoint, methods=list(methods))
    route.negotiated = negotiated  # type: ignore[attr-defined]
    return route
