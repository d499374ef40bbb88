"""Checks of the values of `notifications.*' (the sections are in steepy/config/model.py):
webhook URLs, templates (read and compiled when the configuration is read, so that a syntax
error is a located problem, exit 2) and e-mail's settings that go together."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, ValidationInfo

from steepy.events.templates import TemplateProblem, compiled


def webhook_url(value: str) -> str:
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(value)
        parts.port  # (a port that is no number, or out of range, raises here)
    except ValueError as e:
        raise ValueError(f"`{shown_url(value)}' is no URL: {e}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"`{shown_url(value)}' is not an http:// or https:// URL")
    return value


def shown_url(url: str) -> str:
    """A URL as an error shows it: its password and secret values masked."""
    from steepy.registry.failures import masked  # (the registry's: only for an error)

    return masked(url)


def _template(value: str | None) -> str | None:
    if value is not None:
        compiled(value)  # a syntax error is a ValueError naming its line
    return value


class TemplateFile(str):
    """A `templateFile' as written, with the text read from it (relative to the
    configuration file)."""

    text: str


def template_file(value: str | None, info: ValidationInfo) -> TemplateFile | None:
    if value is None:
        return None
    if info.data.get("template") is not None:
        raise ValueError("give `template' or `templateFile', not both")
    directory = (info.context or {}).get("directory", ".")
    path = Path(directory) / value
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None
    try:
        compiled(text)
    except TemplateProblem as e:
        raise ValueError(f"{path}: {e}") from None
    out = TemplateFile(value)
    out.text = text
    return out


Template = Annotated[str | None, AfterValidator(_template)]


def variable_name(value: str | None) -> str | None:
    if value is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
        raise ValueError(f"`{value}' is not the name of an environment variable")
    return value


def username(value: str | None, info: ValidationInfo) -> str | None:
    """E-mail's `username' goes with `passwordEnv' (checked before it)."""
    if "password_env" not in info.data:
        return value  # `passwordEnv' has a problem of its own
    if (value is None) != (info.data["password_env"] is None):
        raise ValueError("give `username' and `passwordEnv' (the variable that holds the "
                         "password) together")
    return value


def ssl_alone(value: bool, info: ValidationInfo) -> bool:
    if value and info.data.get("starttls"):
        raise ValueError("give `ssl' (TLS from the start) or `starttls', not both")
    return value


def with_host(value: Any, info: ValidationInfo) -> Any:
    """`from' and `to' of e-mail: wanted with `host', and only with it."""
    if "host" not in info.data:  # `host' has a problem of its own
        return value
    if info.data["host"] is not None and not value:
        raise ValueError("is required with `host'")
    if info.data["host"] is None and value:
        raise ValueError("needs `host' (the SMTP server) too")
    return value


def addresses(value: Any) -> Any:
    """An e-mail address, or a list of them: `name@domain'."""
    for address in value if isinstance(value, list) else [value] if value else []:
        if not re.fullmatch(r"[^@\s<>,]+@[^@\s<>,]+", address):
            raise ValueError(f"`{address}' is not an e-mail address such as `me@example.org'")
    return value
