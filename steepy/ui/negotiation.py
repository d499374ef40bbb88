"""Which answer a request wants: a page or the API's JSON. Steep's rule, shared by steepy's
own pages and a build of Steep's UI (`http.steepUi`)."""

from __future__ import annotations


def prefers_html(accept: str) -> bool:
    """Steep's rule: walk the accepted types, most preferred first; JSON (or a wildcard that
    matches it) means no, HTML means yes; neither means no."""
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
        entries.append((-quality, position, media.strip().lower()))
    for _, _, media in sorted(entries):
        if media in ("application/json", "application/*", "*/*"):
            return False
        if media in ("text/html", "text/*"):
            return True
    return False
