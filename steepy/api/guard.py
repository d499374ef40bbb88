"""A database that cannot be used (its server unreachable, its file not a database, its disk
full) as the API's DatabaseUnavailable, with the command line's message: `cannot use the
database NAME: CAUSE (the driver's words)`, not the driver's or SQLAlchemy's exception.

`GuardedBackend` puts this around every call of a local backend the API makes (and around
the events it yields); the command line keeps its own handling (exit code 4)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Callable

from steepy.registry.failures import DatabaseUnavailable


@contextmanager
def database_failures(url: str | None = None) -> Iterator[None]:
    """Raise a failure of the database at `url` (None: the one opened last) met inside as
    DatabaseUnavailable; everything else passes as it is."""
    from steepy.registry.failures import describe, is_database_failure

    try:
        yield
    except Exception as e:
        if not is_database_failure(e):
            raise
        raise DatabaseUnavailable(f"cannot use the {describe(e, url)}") from e


class GuardedBackend:
    """A local backend (`steepy.api.local.LocalBackend`) whose methods raise
    DatabaseUnavailable for a database that cannot be used."""

    def __init__(self, backend: Any, url: str | None):
        self._backend = backend
        self._url = url

    def __getattr__(self, name: str) -> Any:
        with database_failures(self._url):  # `registry` opens the database
            value = getattr(self._backend, name)
        return self._guarded(value) if callable(value) else value

    def _guarded(self, method: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            with database_failures(self._url):
                found = method(*args, **kwargs)
            return self._each(found) if isinstance(found, Iterator) else found

        return call

    def _each(self, items: Iterator[Any]) -> Iterator[Any]:
        """A generator's items (`follow`), its database failures raised as above."""
        while True:
            with database_failures(self._url):
                try:
                    item = next(items)
                except StopIteration:
                    return
            yield item
