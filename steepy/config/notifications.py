"""The `notifications' keys (extensions 12): webhooks, e-mail, and how deliveries are
tried."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, Field, field_validator

from steepy.config import notification_values as _notify
from steepy.config.notification_values import Template, TemplateFile
from steepy.config.section import Section
from steepy.config.values import Duration, EventPattern, Int, string_list
from steepy.events.email import Email
from steepy.events.webhooks import DEFAULT_EVENTS, Subscriber, Webhook


class WebhookSettings(Section):
    """One entry of `notifications.webhooks' (extensions 12)."""

    url: Annotated[str, AfterValidator(_notify.webhook_url)]
    # kinds of timeline events, globs, `KIND:STATUS,...' or `submission.finished'
    events: Annotated[list[EventPattern], BeforeValidator(string_list)] = Field(
        default_factory=lambda: list(DEFAULT_EVENTS), min_length=1)
    secret: str | None = Field(None, min_length=1)  # signs each body (X-Steepy-Signature)
    template: Template = Field(None, min_length=1)  # the body (Jinja2); None: the JSON document
    template_file: Annotated[str | None, AfterValidator(_notify.template_file)] = Field(
        None, alias="templateFile", min_length=1)  # ... or read from this file
    content_type: str = Field("application/json", alias="contentType", min_length=1)

    def webhook(self) -> Webhook:
        text = self.template_file.text if isinstance(self.template_file, TemplateFile) else None
        return Webhook(self.url, tuple(self.events), self.secret, self.template or text,
                       self.content_type)


class EmailSettings(Section):
    """`notifications.email': messages through an SMTP server (none without `host')."""

    host: str | None = Field(None, min_length=1)  # the SMTP server; None: no e-mail
    port: Int | None = Field(None, ge=1, le=65535)  # None: 465 with ssl, 587 with starttls, 25
    sender: Annotated[str | None, AfterValidator(_notify.addresses),
                      AfterValidator(_notify.with_host)] = Field(None, alias="from")
    to: Annotated[list[str], BeforeValidator(string_list), AfterValidator(_notify.addresses),
                  AfterValidator(_notify.with_host)] = Field(default_factory=list)
    events: Annotated[list[EventPattern], BeforeValidator(string_list)] = Field(
        default_factory=lambda: list(DEFAULT_EVENTS), min_length=1)
    starttls: bool = False
    ssl: Annotated[bool, AfterValidator(_notify.ssl_alone)] = False
    # the environment variable that holds the password (never the password itself)
    password_env: Annotated[str | None, AfterValidator(_notify.variable_name)] = Field(
        None, alias="passwordEnv")
    username: Annotated[str | None, AfterValidator(_notify.username)] = Field(
        None, min_length=1)
    subject: Template = Field(None, min_length=1)  # None: `steepy: submission NAME ID: STATUS'
    template: Template = Field(None, min_length=1)  # the text; None: the event's fields
    template_file: Annotated[str | None, AfterValidator(_notify.template_file)] = Field(
        None, alias="templateFile", min_length=1)

    def email(self) -> Email | None:
        if self.host is None or self.sender is None:
            return None
        port = self.port or (465 if self.ssl else 587 if self.starttls else 25)
        text = self.template_file.text if isinstance(self.template_file, TemplateFile) else None
        optional = {k: v for k, v in (("subject", self.subject),
                                      ("template", self.template or text)) if v is not None}
        return Email(host=self.host, port=port, sender=self.sender, to=tuple(self.to),
                     events=tuple(self.events), starttls=self.starttls, ssl=self.ssl,
                     username=self.username, password_env=self.password_env, **optional)


class NotificationsSettings(Section):
    webhooks: list[WebhookSettings] = Field(default_factory=list)
    email: EmailSettings = Field(default_factory=EmailSettings)
    max_attempts: Int = Field(10, alias="maxAttempts", ge=1)  # tries before FAILED
    delay: Duration = Field("1s", ge=0)  # before the second try; doubled each time after
    max_delay: Duration = Field("5m", alias="maxDelay", ge=0)
    timeout: Duration = Field("10s", gt=0)  # of one request

    @field_validator("webhooks")
    @classmethod
    def _distinct(cls, value: list[WebhookSettings]) -> list[WebhookSettings]:
        urls = [w.url for w in value]
        twice = sorted({u for u in urls if urls.count(u) > 1})
        if twice:  # a delivery names its webhook by URL
            raise ValueError(f"`{_notify.shown_url(twice[0])}' is given twice; give each "
                             "webhook once, with all the events it wants")
        return value

    def subscribers(self) -> tuple[Subscriber, ...]:
        """Every receiver: the webhooks, and e-mail if configured."""
        email = self.email.email()
        return (*(w.webhook() for w in self.webhooks), *([email] if email else []))
