"""The secrets the engine knows, kept out of what steepy says of a tool's output.

A tool may print a secret: one its service was given on purpose (`passEnvironment'), or one it
found itself. What steepy records and sends on of that output (an attempt's last lines, the
error message made of them, so the timeline, `steepy show', the API, webhook bodies and
e-mails, and the `STEEPY_LAST_MESSAGE' of the next attempt) shows each secret the engine knows
as `***': those of its configuration (`http.token', webhooks' secrets and URLs, passwords and
tokens in URLs: `Withheld'), the values of the variables it reads secrets from (the one
`passwordEnv' names, `PGPASSWORD'), the secrets of the databases this process opened, and its
own settings named like a token, password, secret, key or URL (`STEEPY_HTTP_TOKEN', the
password in `STEEPY_DB_URL'). The run's log is the tool's output as it wrote it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from steepy.agent.environment import Withheld, is_engine_setting, kept_secrets, variables
from steepy.registry.failures import url_secrets

__all__ = ["engine_secrets", "redacted"]

# the engine's own settings whose values are secrets
_SECRET_NAME = re.compile(r"TOKEN|PASSWORD|PASSWD|SECRET|KEY|URL|CREDENTIAL")
_MIN_SECRET = 4  # shorter values are no secrets and would spoil every message

# withheld -> (the environment's decoded copy, the secrets it names, the secrets, longest
# first): an agent's and the engine's own (`Withheld()', lastfailure.py) are asked in turns
_memo: dict[Withheld, tuple[object, frozenset[str], list[str]]] = {}


def engine_secrets(withheld: Withheld = Withheld()) -> list[str]:
    """The secret values the engine knows (those of `withheld', the agent's
    `config.withheld', and the others above), longest first: a URL before the password in
    it. Kept while the environment, `withheld' and the databases opened stay the same."""
    full, opened = variables(), kept_secrets(withheld)
    memo = _memo.get(withheld)
    if memo is not None and memo[0] is full and memo[1] == opened:
        return memo[2]
    found = set(opened)
    for name, value in full.items():
        if is_engine_setting(name) and _SECRET_NAME.search(name.upper()):
            found |= {value, *url_secrets(value)}
    secrets = sorted((v for v in found if len(v) >= _MIN_SECRET), key=len, reverse=True)
    if len(_memo) >= 8:  # (a process has one or two)
        _memo.clear()
    _memo[withheld] = (full, opened, secrets)
    return secrets


def redacted(text: str, secrets: Iterable[str]) -> str:
    """`text' with each of `secrets' (longest first) replaced by `***'."""
    for value in secrets:
        if value in text:
            text = text.replace(value, "***")
    return text
