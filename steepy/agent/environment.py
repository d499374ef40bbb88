"""The environment a tool runs with (issue 24: secrets stay with the engine).

A tool gets the environment steepy was started with, minus steepy's own configuration (every
`STEEPY_*' and Steep's `STEEP_*' variable: `STEEPY_HTTP_TOKEN', `STEEPY_DB_URL' with its
password, all the settings of steepy.yaml given as variables), minus every variable the engine
reads a secret from (`Withheld': libpq's password variables, the one `passwordEnv' names, and
any whose value is a secret the configuration holds, as when steepy.yaml's template reads
`{{ env.HOOK_SECRET }}' for a webhook's `secret'), plus what its service declares:
`passEnvironment' (names whose values are taken from the engine's environment, also ones the
filter drops, so a user can pass one deliberately) and `environment' (a mapping of names to
values). The agent adds the attempt's `STEEPY_*' variables (STEEPY_SUBMISSION_ID, ...,
STEEPY_LAST_EXIT_CODE; steepy.agent.attempt) and a fallback's STEEPY_FAILED_* ones on top.

Reading `os.environ' decodes every variable each time: the decoded copy and its filtered part
are kept until the environment changes (a C-level compare of CPython's bytes mapping), so an
attempt only copies a dict.
"""

from __future__ import annotations

import html
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from steepy.registry.failures import opened_urls, url_secrets

if TYPE_CHECKING:
    from steepy.model.processchain import Executable

__all__ = ["Withheld", "attempt_environment", "engine_environment", "environment",
           "is_engine_setting", "kept_secrets", "variables"]

# the variables that configure steepy (steepy.config.located.ENV_PREFIXES, not imported here:
# that module needs pydantic and builds the defaults, which an agent need not load)
ENV_PREFIXES = ("STEEPY_", "STEEP_")
# what libpq (psycopg, the PostgreSQL driver) reads a password or a client key from
LIBPQ_SECRETS = frozenset({"PGPASSWORD", "PGPASSFILE", "PGSERVICEFILE", "PGSSLKEY"})
# a secret this long or longer is also found inside a variable (a DSN with the password)
_FOUND_INSIDE = 8
# a variable this long or longer that is part of a webhook URL's path is taken for its secret
# (a Slack path's segment is 24 characters; a word such as `services' is no secret)
_PART_OF = 16


@dataclass(frozen=True)
class Withheld:
    """What the engine reads secrets from besides its own settings: variables by name (the
    one `notifications.email.passwordEnv' names) and the secrets of its configuration
    (http.token, webhooks' secrets, passwords and tokens in URLs). A variable named here, or
    whose value is one of the secrets or holds one, is no tool's unless its service names it
    in `passEnvironment'."""

    names: frozenset[str] = frozenset()
    secrets: frozenset[str] = frozenset()
    # texts a variable's value must not be part of (`_PART_OF' characters or more, in any
    # case): the webhooks' URLs without their scheme, whose secret may be the path itself
    # (Slack's, Teams'); a value that names an existing file or directory is not taken for
    # one (a local hook's path may hold the project's folder, which PWD holds too)
    within: frozenset[str] = frozenset()

    @classmethod
    def of(cls, config: Any) -> "Withheld":
        """Those of a (checked) configuration, steepy.config.Config. A webhook's URL is a
        secret as a whole: a variable holding it, or holding part of its path or query
        (`{{ env.SLACK_WEBHOOK }}'), is withheld."""
        notifications = config.notifications
        hooks = [w.url for w in notifications.webhooks if w.url]
        secrets = {config.http.token, *(w.secret for w in notifications.webhooks), *hooks}
        urls = [config.db.url, *hooks]
        names = {notifications.email.password_env}
        return cls(frozenset(n for n in names if n), frozenset(_secrets(secrets, urls)),
                   frozenset(u.partition("://")[2].lower()
                             for h in hooks for u in {h, html.unescape(h)}))


def _secrets(values: Iterable[str | None], urls: Iterable[str | None]) -> set[str]:
    """The values, and of each URL with a secret: the URL and the secrets in it; each also
    as it was before a templated steepy.yaml HTML-escaped it (Pebble's default, kept:
    `{{ env.TOKEN }}' of `a'b' is the secret `a&#39;b', and the variable holds `a'b')."""
    found = {v for v in values if v}
    for url in urls:
        inside = url_secrets(url) if url else set()
        if inside:
            found |= inside | {url}
    return found | {html.unescape(v) for v in found}

# os.environ's bytes, its decoded text, and that without steepy's own configuration
_cache: tuple[dict, dict[str, str], dict[str, str]] = ({}, {}, {})


def is_engine_setting(name: str) -> bool:
    """Whether the variable `name' configures steepy (or Steep) and stays with the engine."""
    return name.startswith(ENV_PREFIXES)


def _filtered(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items()
            if not k.startswith(ENV_PREFIXES) and k not in LIBPQ_SECRETS}


def kept_secrets(withheld: Withheld) -> frozenset[str]:
    """The secrets of `withheld', of the variables it names (and PGPASSWORD) and of the
    databases this process opened (`--db URL')."""
    full = _current()[0]
    return frozenset(set(withheld.secrets) | _secrets(
        (full.get(n) for n in (*withheld.names, "PGPASSWORD")), opened_urls()))


def _without(env: dict[str, str], withheld: Withheld) -> dict[str, str]:
    """`env' without the variables `withheld' names, nor those holding a secret of it, of
    a database this process opened or of a named variable (`kept_secrets')."""
    secrets = kept_secrets(withheld)
    if not secrets and not withheld.names and not withheld.within:
        return env
    inside = [s for s in secrets if len(s) >= _FOUND_INSIDE]
    return {k: v for k, v in env.items() if k not in withheld.names and v not in secrets
            and not any(s in v for s in inside)
            and not _part_of(v, withheld.within)}


def _part_of(value: str, urls: frozenset[str]) -> bool:
    """Whether `value` is (a long enough) part of one of these webhook URLs (lowercase)."""
    if len(value) < _PART_OF or not urls:
        return False
    lowered = value.lower()
    return any(lowered in url for url in urls) and not os.path.exists(value)


def _current() -> tuple[dict[str, str], dict[str, str]]:
    """This process's environment and its filtered part, shared (not copied): read only."""
    global _cache
    data = getattr(os.environ, "_data", None)  # CPython's own bytes mapping
    if data is None:
        full = dict(os.environ)
        return full, _filtered(full)
    if _cache[0] != data:
        snapshot = dict(data)  # first: a change while decoding is seen by the next call
        full = dict(os.environ)
        _cache = (snapshot, full, _filtered(full))
    return _cache[1], _cache[2]


def environment() -> dict[str, str]:
    """A copy of this process's whole environment (steepy's settings included)."""
    return dict(_current()[0])


def variables() -> Mapping[str, str]:
    """This process's whole environment, shared (read only; the same object while it does
    not change)."""
    return _current()[0]


def engine_environment(extra: Mapping[str, str] | None = None,
                       withheld: Withheld = Withheld()) -> dict[str, str]:
    """A copy of this process's environment without steepy's own configuration and the
    variables it reads secrets from (`withheld', the agent's `config.withheld'), with `extra'
    on top (the agent's `config.env', unfiltered): the base of every tool's environment."""
    filtered = _without(_current()[1], withheld)
    return {**filtered, **extra} if extra else dict(filtered)


def attempt_environment(base: Mapping[str, str], exe: "Executable") -> dict[str, str]:
    """A fresh dict: `base' (the agent's filtered environment), then the values of the
    service's `passEnvironment' names that `base' lacks, taken from the engine's whole
    environment (a name set in neither stays unset), then the service's `environment'
    mapping."""
    env = dict(base)
    passed = exe.pass_environment
    if passed:
        engine = _current()[0]
        for name in passed:
            if name not in env:  # (one the filter kept is there already, config.env's too)
                value = engine.get(name)
                if value is not None:
                    env[name] = value
    if exe.environment:
        env.update(exe.environment)
    return env


# what the executor's interpreter may need to start (a Python of an HPC module finds its
# libpython through LD_LIBRARY_PATH) and to read text: no secrets
_EXECUTOR_NEEDS = ("LANG", "LC_ALL", "LC_CTYPE", "LD_LIBRARY_PATH", "LD_PRELOAD")


def kept_from_tools() -> dict[str, str]:
    """The environment of the engine's executor, the parent of every tool: the locale and
    the loader's paths only. A tool can read its parent's environment (/proc/PPID/environ),
    so the executor must hold no secret; it takes each tool's environment (and PATH) from
    the engine's request."""
    return {k: v for k, v in os.environ.items() if k in _EXECUTOR_NEEDS}


def hide_this_process() -> bool:
    """Make this process (the engine) unreadable to other processes of its user, tools
    included: its environment and memory hold the secrets of its configuration, and
    /proc/PID/environ is readable by the same user otherwise (Linux: PR_SET_DUMPABLE 0;
    no core dumps then). Whether it could."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(4, 0, 0, 0, 0) == 0  # PR_SET_DUMPABLE
    except (OSError, AttributeError):
        return False
