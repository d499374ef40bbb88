"""A small synchronous client of steepy's (or Steep's) HTTP API, for the CLI's `--server`."""

from __future__ import annotations

import os
from typing import Any

import httpx

from steepy.errors import SteepyError


class ClientError(SteepyError):
    """The server could not be reached, or refused the request (message for the user)."""


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
            raise ClientError(f"Cannot reach the steepy server at {self.base_url}: {e}") from None
        if response.status_code in ok or response.status_code == 404:
            return response
        if response.status_code == 401:
            raise ClientError(f"The server at {self.base_url} wants a token: "
                              f"{message(response)} (set STEEPY_HTTP_TOKEN)")
        raise ClientError(f"The server at {self.base_url} answered {response.status_code}: "
                          f"{message(response)}")

    def json(self, method: str, path: str, **kwargs: Any) -> Any | None:
        """The JSON of a successful answer; None for 404."""
        response = self.request(method, path, **kwargs)
        return None if response.status_code == 404 else response.json()


def message(response: httpx.Response) -> str:
    """The message of an error response (JSON or plain text)."""
    try:
        return str(response.json().get("message"))
    except (ValueError, AttributeError):
        return response.text.strip()
