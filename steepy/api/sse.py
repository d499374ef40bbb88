"""Reading a server's stream of server-sent events (`GET /workflows/ID/stream`): one JSON
event per `data:` field, and a last `event: end` once the submission has finished."""

from __future__ import annotations

from typing import Iterator

import httpx

from steepy.api.errors import NotFound
from steepy.http.client import ApiClient, ClientError, json_of


def read_stream(api: ApiClient, path: str, after: int,
                read_timeout_s: float) -> Iterator[dict | None]:
    """The events of the stream at `path` after event id `after`, then None at its `end`;
    nothing more when the connection ends first (the caller may open it again)."""
    timeout = httpx.Timeout(api.http.timeout.connect, read=read_timeout_s)
    try:
        with api.http.stream("GET", path, params={"after": after}, timeout=timeout,
                             headers={"Accept": "text/event-stream"}) as response:
            if response.status_code == 404:
                raise NotFound(f"{api.base_url} has no {path}: no such submission, or not a "
                               "steepy server")
            if response.status_code != 200:
                response.read()
                raise ClientError(f"The server at {api.base_url} answered "
                                  f"{response.status_code} for {path}")
            kind = response.headers.get("content-type", "no content type").split(";")[0]
            if kind != "text/event-stream":
                raise ClientError(f"{api.base_url}{path} answered 200 with {kind}, not a stream "
                                  "of events: is it a steepy server?")
            yield from _events(response.iter_lines(), f"{api.base_url}{path} sent an event")
    except httpx.HTTPError:
        return  # the connection ended: the caller looks whether it is over


def _events(lines: Iterator[str], where: str) -> Iterator[dict | None]:
    kind, data = "message", []
    for line in lines:
        if line == "":  # the end of one event
            if kind == "end":
                yield None
                return
            if data:
                yield json_of("\n".join(data), "text", where, dict, ("id",))
            kind, data = "message", []
            continue
        if line.startswith(":"):
            continue  # a keep-alive comment
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            kind = value
        elif field == "data":
            data.append(value)

