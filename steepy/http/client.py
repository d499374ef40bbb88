"""A small synchronous client of steepy's (or Steep's) HTTP API, for the CLI's `--server`."""

from __future__ import annotations

import json
import os
from typing import Any

import httpx

from steepy.errors import PROBLEMS_HEADER, SteepyError
from steepy.model.common import type_name


class ClientError(SteepyError):
    """The server could not be reached, or refused the request (message for the user)."""


class Unreachable(ClientError):
    """The server gave no usable answer: it could not be reached, or it (or a proxy in
    front of it) answered 502, 503 or 504, as while it restarts or its database does. It
    may come back."""


NOT_NOW = (502, 503, 504)  # answers that say "not now", not "no"


def server_token() -> str | None:
    """The bearer token to send: STEEPY_HTTP_TOKEN, else `http.token' of steepy.yaml."""
    token = os.environ.get("STEEPY_HTTP_TOKEN")
    if not token:
        from steepy.config import load_config

        token = load_config().get("http.token")
    return None if token in (None, "") else str(token)


class ApiClient:
    def __init__(self, base_url: str, token: str | None = None, timeout_s: float = 30.0):
        if "://" not in base_url:
            base_url = "http://" + base_url
        self.base_url = base_url.rstrip("/")
        headers = {"Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self.http = httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout_s)

    def __enter__(self) -> "ApiClient":
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.http.close()

    def request(self, method: str, path: str, ok: tuple[int, ...] = (200,),
                **kwargs: Any) -> httpx.Response:
        """The response when its status is in `ok` or is 404 (the caller tells the user
        what was missing); ClientError for anything else."""
        try:
            response = self.http.request(method, path, **kwargs)
        except httpx.HTTPError as e:
            raise Unreachable(f"Cannot reach the steepy server at {self.base_url}: {e}") from None
        if response.status_code in ok or response.status_code == 404:
            return response
        if response.status_code == 401:
            raise ClientError(f"The server at {self.base_url} wants a token: "
                              f"{message(response)} (set STEEPY_HTTP_TOKEN)")
        error = Unreachable if response.status_code in NOT_NOW else ClientError
        raise error(f"The server at {self.base_url} answered {response.status_code}: "
                    f"{message(response)}")

    def json(self, method: str, path: str, shape: type = object, keys: tuple[str, ...] = (),
             **kwargs: Any) -> Any | None:
        """The JSON of a successful answer (see `decoded`); None for 404."""
        response = self.request(method, path, **kwargs)
        return None if response.status_code == 404 else decoded(response, shape, keys)


def decoded(response: httpx.Response, shape: type = object, keys: tuple[str, ...] = ()) -> Any:
    """The JSON of `response` (see `json_of`)."""
    kind = response.headers.get("content-type", "no content type").split(";")[0]
    return json_of(response.content, kind, f"{response.url.copy_with(query=None)} answered "
                   f"{response.status_code}", shape, keys)


def json_of(text: str | bytes, kind: str, where: str, shape: type = object,
            keys: tuple[str, ...] = ()) -> Any:
    """`text` (of content type `kind`) as JSON: a `shape` (dict or list), with these `keys`
    when a dict. ClientError for anything else, such as a proxy's HTML page: `where` says who
    answered it."""
    try:
        found = json.loads(text)
    except ValueError:  # not JSON, or not UTF-8
        raise ClientError(f"{where} with {kind}, not JSON: is it a steepy server?") from None
    missing = [key for key in keys if key not in found] if isinstance(found, dict) else []
    if not isinstance(found, shape) or missing:
        what = f"without `{missing[0]}'" if missing else f"that is {type_name(found)}"
        raise ClientError(f"{where} with JSON {what}, not steepy's answer: is it a steepy "
                          "server?")
    return found


def problems(response: httpx.Response) -> list[dict]:
    """The located problems of an error answer: `{"message", "path"?, "file"?, "line"?,
    "column"?}` each; none from Steep or when the header is missing or broken."""
    try:
        found = json.loads(response.headers.get(PROBLEMS_HEADER, "[]"))
    except ValueError:
        return []
    return [p for p in found if isinstance(p, dict) and "message" in p] \
        if isinstance(found, list) else []


def message(response: httpx.Response) -> str:
    """The message of an error response (plain text, as Steep writes it); for anything else
    (a proxy's HTML page), what it is."""
    kind = response.headers.get("content-type", "").split(";")[0]
    if kind in ("", "text/plain") or not response.content:
        return response.text.strip()
    return f"{kind}, not steepy's answer: is it a steepy server?"
