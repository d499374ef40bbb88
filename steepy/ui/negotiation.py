"""Which answer a request wants: a page or the API's JSON. Steep's rule, shared by steepy's
own pages and a build of Steep's UI (`http.steepUi`)."""

from __future__ import annotations


JSON_TYPES = ("application/json", "application/*", "*/*")


def prefers_html(accept: str) -> bool:
    """Steep's rule: walk the accepted types, most preferred first; JSON (or a wildcard that
    matches it) means no, HTML means yes; neither means no."""
    for _, _, media in _accepted(accept):
        if media in JSON_TYPES:
            return False
        if media in ("text/html", "text/*"):
            return True
    return False


def accepts_json(accept: str) -> bool:
    """Whether a client takes JSON at all (Steep's routes that only produce JSON answer 406
    otherwise): no Accept header, or one that names JSON or a wildcard matching it."""
    return accepts(accept, "application/json")


def accepts(accept: str, media: str) -> bool:
    """Whether a client takes `media` (`text/plain`) at all: no Accept header, or one that
    names it, `text/*' or `*/*' with a quality above 0."""
    entries = _accepted(accept)
    ranges = (media, media.partition("/")[0] + "/*", "*/*")
    return not entries or any(found in ranges and quality < 0 for quality, _, found in entries)


def _accepted(accept: str) -> list[tuple[float, int, str]]:
    """The accepted types as (minus quality, position, type), most preferred first."""
    entries = []
    for position, item in enumerate(accept.split(",")):
        media, _, params = item.strip().partition(";")
        quality = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if media.strip():
            entries.append((-quality, position, media.strip().lower()))
    return sorted(entries)
