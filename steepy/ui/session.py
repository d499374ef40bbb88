"""The browser's session when `http.token` is set: the login form puts the token in a cookie
(`HttpOnly`: no script can read it; `SameSite=Strict`: no other site's page sends it), and
every state-changing request that relies on that cookie must also carry the page's CSRF token
in `X-CSRF-Token`. The CSRF token is derived from the API token, so nothing is stored on the
server and every process serving the same database accepts it."""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import quote, unquote

COOKIE = "steepy_token"
CSRF_HEADER = "x-csrf-token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
MAX_AGE_S = 7 * 24 * 3600  # a week; the token itself never expires


def csrf_token(token: str) -> str:
    """The CSRF token pages send along for the session of `token`."""
    return hmac.new(token.encode(), b"steepy csrf v1", hashlib.sha256).hexdigest()


def matches(given: str | bytes | None, expected: str) -> bool:
    """Constant-time comparison: no timing oracle."""
    if not given:
        return False
    if isinstance(given, str):
        given = given.encode("utf-8", "surrogateescape")
    return hmac.compare_digest(given, expected.encode())


def cookie_header(token: str, base: str, secure: bool) -> str:
    """The `Set-Cookie` value that logs a browser in."""
    value = f"{COOKIE}={quote(token, safe='')}; Path={base or '/'}; Max-Age={MAX_AGE_S}; HttpOnly; SameSite=Strict"
    return value + ("; Secure" if secure else "")


def clear_cookie_header(base: str) -> str:
    return f"{COOKIE}=; Path={base or '/'}; Max-Age=0; HttpOnly; SameSite=Strict"


def cookie_value(raw_cookie_header: str) -> str | None:
    """The token from a `Cookie` header, if it has one (the cookie holds it URL-encoded: a
    token may have characters a cookie cannot)."""
    for part in raw_cookie_header.split(";"):
        name, sep, value = part.strip().partition("=")
        if sep and name == COOKIE and value:
            return unquote(value)
    return None
