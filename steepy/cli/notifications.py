"""`steepy notifications`: the deliveries of notifications to webhooks (extensions 12), from
the local database or a server (`--server URL`)."""

from __future__ import annotations

import click

from steepy.api.backends import Backend
from steepy.cli.manage import with_backend
from steepy.cli.output import _time, print_json, table


@click.command(name="notifications")
@click.option("--failed", is_flag=True, help="Only deliveries that gave up (FAILED).")
@click.option("--size", default=20, show_default=True, help="How many, newest first.")
@click.option("--json", "as_json", is_flag=True, help="The deliveries as a JSON list.")
@with_backend
def notifications(backend: Backend, failed: bool, size: int, as_json: bool) -> None:
    """List deliveries of notifications: event, webhook, status (PENDING, DELIVERED or
    FAILED), tries, the last error and when the next try is due."""
    found, total = backend.notifications(failed, size)  # (URLs without passwords, tokens)
    if as_json:
        print_json(found)
        return
    table(["key", "event", "submission", "url", "status", "attempts", "last error", "next try"],
          [(d["key"], _event(d), d.get("submissionId"), d["url"], d["status"], d["attempts"],
            d.get("lastError"), _time(d.get("nextTry"))) for d in found])
    if total > len(found):
        click.echo(f"({total} in all; --size {total} for all)", err=True)


def _event(delivery: dict) -> str:
    return f"{delivery['event']} #{delivery['eventId']}"
