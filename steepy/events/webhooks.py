"""What a webhook wants, what it is sent and how it is signed (pure: the registry's outbox
and the configuration use it; steepy/notifications/delivery.py sends).

A webhook names the timeline events it wants as patterns: a kind (`chain.finished`), a glob
over kinds (`chain.*`, `*`), either followed by `:STATUS[,STATUS...]` to want only events
of those statuses (`chain.finished:ERROR`), or `submission.finished`, short for
`submission.status:SUCCESS,PARTIAL_SUCCESS,ERROR,CANCELLED` (a submission reached its final
status; the default). The kinds are those of the catalogue (steepy/events/): a pattern that
matches none of them is refused.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from steepy import __version__
from steepy.events import EventKind
from steepy.model.submission import FINISHED_SUBMISSION, ProcessChainStatus, SubmissionStatus
from steepy.model.suggestions import closest

FINISHED = "submission.finished"  # the alias of a submission's final status
FINAL_STATUSES = tuple(str(s) for s in SubmissionStatus if s in FINISHED_SUBMISSION)
DEFAULT_EVENTS = (FINISHED,)
STATUSES = frozenset(str(s) for s in (*SubmissionStatus, *ProcessChainStatus))
SIGNATURE_HEADER = "X-Steepy-Signature"
EVENT_HEADER = "X-Steepy-Event"
KEY_HEADER = "Idempotency-Key"


@dataclass(frozen=True)
class Pattern:
    """One entry of a webhook's `events`: a glob over kinds and, maybe, the statuses."""

    kinds: str
    statuses: frozenset[str] | None = None  # None: any (or none)

    def matches(self, kind: str, data: dict[str, Any]) -> bool:
        if not fnmatchcase(kind, self.kinds):
            return False
        return self.statuses is None or data.get("status") in self.statuses


def parse_pattern(text: str) -> Pattern:
    """A pattern from its text; ValueError (with a `did you mean') when it can match no
    event or names an unknown status."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("an event pattern must be a non-empty string such as "
                         f"`{FINISHED}' or `chain.*'")
    text = text.strip()
    if text == FINISHED:
        return Pattern(EventKind.SUBMISSION_STATUS, frozenset(FINAL_STATUSES))
    kinds, _, statuses = text.partition(":")
    if not any(fnmatchcase(k, kinds) for k in EventKind):
        close = closest(kinds, [*EventKind, FINISHED])
        hint = (f"did you mean `{close}'?" if close else
                f"the kinds are {FINISHED}, {', '.join(EventKind)}, and globs such as `chain.*'")
        raise ValueError(f"`{kinds}' matches no kind of event; {hint}")
    if not _:
        return Pattern(kinds)
    wanted = frozenset(s.strip() for s in statuses.split(",") if s.strip())
    unknown = sorted(wanted - STATUSES)
    if not wanted or unknown:
        raise ValueError(f"`{statuses}' is not a list of statuses such as `ERROR,CANCELLED'"
                         + (f" (unknown: {', '.join(unknown)})" if unknown else ""))
    return Pattern(kinds, wanted)


@dataclass(frozen=True)
class Subscriber:
    """A receiver of notifications (a webhook, or e-mail: steepy/events/email.py): the
    address its deliveries are stored under in the outbox and the events it wants."""

    url: str
    events: tuple[str, ...] = DEFAULT_EVENTS
    patterns: tuple[Pattern, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "patterns", tuple(parse_pattern(e) for e in self.events))

    def wants(self, kind: str, data: dict[str, Any]) -> bool:
        return any(p.matches(kind, data) for p in self.patterns)

    def may_want(self, kind: str) -> bool:
        """Whether some event of this kind may be wanted (its data not looked at)."""
        return any(fnmatchcase(kind, p.kinds) for p in self.patterns)


@dataclass(frozen=True)
class Webhook(Subscriber):
    """A URL that is POSTed notifications: signed with `secret`, the body the JSON document
    or, with `template`, that template rendered (steepy/events/templates.py)."""

    secret: str | None = None
    template: str | None = None  # the text (a `templateFile' is read with the configuration)
    content_type: str = "application/json"

    def raw_body(self, stored: str) -> bytes:
        """The bytes to send for a delivery's stored JSON document; TemplateProblem when the
        template cannot render it."""
        if self.template is None:
            return stored.encode("utf-8")
        from steepy.events.templates import render

        return render(self.template, json.loads(stored)).encode("utf-8")


def document(event: dict, submission: dict | None) -> dict:
    """What a webhook is POSTed: the event (as the timeline shows it), its submission (id,
    name, status; None for an agent's event) and steepy's version."""
    return {"event": event, "submission": submission, "steepy": {"version": __version__}}


def body(document: dict) -> bytes:
    """The bytes sent (and signed): compact JSON, keys in a fixed order."""
    return json.dumps(document, separators=(",", ":"), sort_keys=True).encode("utf-8")


def signature(secret: str, raw_body: bytes) -> str:
    """The value of X-Steepy-Signature: `sha256=` and the hex HMAC-SHA256 of the raw body
    with the webhook's secret (as GitHub's X-Hub-Signature-256)."""
    return "sha256=" + hmac.new(secret.encode("utf-8"), raw_body, hashlib.sha256).hexdigest()


def headers(webhook: Webhook, key: str, kind: str, raw_body: bytes) -> dict[str, str]:
    out = {"Content-Type": webhook.content_type, KEY_HEADER: key, EVENT_HEADER: kind,
           "User-Agent": f"steepy/{__version__}"}
    if webhook.secret:
        out[SIGNATURE_HEADER] = signature(webhook.secret, raw_body)
    return out
