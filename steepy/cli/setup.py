"""The local backend's setup (steepy.api.setup.Setup) for the commands: steepy.yaml, the
plugins, services and macros read and checked once per command, and the database of `--db`;
a problem is printed and the command stops with exit code 2."""

from __future__ import annotations

from steepy.cli.common import (checked_plugins, engine_settings, load_registries,
                               open_registry_or_fail)


class CliSetup:
    def definitions(self, services, macros) -> tuple[dict, dict]:
        return load_registries(tuple(services), tuple(macros))

    def runtimes(self):
        return checked_plugins().runtimes()

    def open_registry(self, db: str | None, create: bool = True):
        return open_registry_or_fail(db, create=create)

    def agent(self):
        return engine_settings(None).agent
