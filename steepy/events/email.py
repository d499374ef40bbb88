"""Notifications by e-mail (pure: the configuration builds an `Email`, the registry's outbox
stores its deliveries under its `mailto:` address, steepy/notifications/smtp.py sends).

Subject and text are templates (steepy/events/templates.py) with the webhook's document:
`event`, `submission`, `steepy`. The message's Message-ID is made from the delivery's
Idempotency-Key, so a message sent twice (at least once) can be recognised as one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.utils import formatdate

from steepy import __version__
from steepy.events.templates import render
from steepy.events.webhooks import Subscriber

DEFAULT_SUBJECT = (
    "steepy: {% if submission %}submission {% if submission.name %}{{ submission.name }} "
    "{% endif %}{{ submission.id }}: {{ submission.status }}"
    "{% else %}{{ event.kind }}{% endif %}")
DEFAULT_TEXT = """\
{% if submission -%}
Submission {{ submission.id }}{% if submission.name %} ({{ submission.name }}){% endif %} \
is {{ submission.status }}.

{% endif -%}
Event {{ event.kind }} at {{ event.time }}:
{%- for key, value in event | dictsort %}
  {{ key }}: {{ value }}
{%- endfor %}

-- steepy {{ steepy.version }}
"""


@dataclass(frozen=True, kw_only=True)
class Email(Subscriber):
    """Who sends to whom through which SMTP server, and what. `password_env` names the
    environment variable with the password: the password itself is never stored here."""

    url: str = field(init=False, default="")  # mailto:ADDRESS,...
    host: str
    port: int
    sender: str
    to: tuple[str, ...]
    starttls: bool = False
    ssl: bool = False
    username: str | None = None
    password_env: str | None = None
    subject: str = DEFAULT_SUBJECT
    template: str = DEFAULT_TEXT

    def __post_init__(self) -> None:
        object.__setattr__(self, "url", "mailto:" + ",".join(self.to))
        super().__post_init__()

    def message(self, stored: str, key: str) -> EmailMessage:
        """The message of a delivery's stored JSON document; TemplateProblem when a
        template cannot render it."""
        document = json.loads(stored)
        message = EmailMessage()
        message["Subject"] = " ".join(render(self.subject, document).split())  # one line
        message["From"] = self.sender
        message["To"] = ", ".join(self.to)
        message["Date"] = formatdate(localtime=True)
        message["Message-ID"] = f"<{key}@steepy>"
        message["X-Steepy-Event"] = document["event"]["kind"]
        message["User-Agent"] = f"steepy/{__version__}"
        message.set_content(render(self.template, document))
        return message
