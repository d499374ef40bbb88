"""`steepy plugins`: the plugins this steepy runs with (its own runtimes, those of installed
packages, steepy.yaml's `plugins`), each checked as it is loaded."""

from __future__ import annotations

import json

import click

from steepy.cli.common import checked_plugins


def _applies_to(descriptor: dict) -> str:
    for key in ("supportedRuntime", "supportedDataType"):
        if key in descriptor:
            return f"{key} {descriptor[key]}"
    if "supportedServiceIds" in descriptor:
        return "supportedServiceIds " + ", ".join(descriptor["supportedServiceIds"])
    depends = descriptor.get("dependsOn")
    return f"dependsOn {', '.join(depends)}" if depends else ""


@click.command(name="plugins")
@click.option("--json", "as_json", is_flag=True,
              help="Print Steep's plugin descriptors as JSON (what GET /plugins returns).")
def list_plugins(as_json: bool) -> None:
    """List the plugins: runtimes, adapters, checkers, progress estimators, initializers."""
    descriptors = checked_plugins().descriptors()  # exit 2: a plugin that cannot be used
    if as_json:
        click.echo(json.dumps(descriptors, indent=2))
        return
    from steepy.cli.output import table

    table(["name", "type", "applies to", "version", "object", "from"],
          [(d["name"], d["type"], _applies_to(d), d.get("version") or "", d.get("object") or "",
            d["origin"]) for d in descriptors])
