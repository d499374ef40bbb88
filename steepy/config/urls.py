"""The database URLs steepy opens: `db.url' and `--db' (without pydantic: the commands that
only read the database check a plain `db.url' without it, issue 31)."""

from __future__ import annotations

import re

_URL_SCHEME = re.compile(r"([\w+]+)://")  # what SQLAlchemy reads: `dialect+driver://'
_URL_FORMS = "sqlite:///FILE or postgresql+psycopg://USER:PASSWORD@HOST:PORT/DB"
DRIVERS = ("sqlite", "sqlite+pysqlite", "postgresql", "postgresql+psycopg")  # dialect+driver


def database_url(url: str | None) -> str | None:
    """A database URL steepy can open; Steep's JDBC form (`jdbc:postgresql://host:5432/db')
    is refused with the URL to write instead."""
    if url is None:
        return None
    from steepy.registry.failures import masked  # (only here: it needs SQLAlchemy)

    shown = masked(url)  # a message never shows a password
    if url.startswith("jdbc:"):
        scheme, _, where = shown[len("jdbc:"):].partition("://")
        if scheme == "postgresql" and where:
            where = where.split("?")[0].split("@")[-1]  # its user and password go first
            raise ValueError(f"`{shown}' is Steep's JDBC form; steepy takes an SQLAlchemy URL: "
                             f"postgresql+psycopg://USER:PASSWORD@{where} (Steep's db.username "
                             "and db.password go into it)")
        raise ValueError(f"`{shown}' is a JDBC URL; steepy takes {_URL_FORMS}")
    if url != url.strip():  # (a newline a YAML block left at its end: a file `x.db\n')
        raise ValueError(f"`{shown}' has white space at its end; remove it")
    match = _URL_SCHEME.match(url)
    if match is None:
        raise ValueError(f"`{shown}' is not a database URL; expected {_URL_FORMS}")
    if match[1].split("+")[0] not in ("sqlite", "postgresql"):
        raise ValueError(f"unsupported database `{match[1]}' in `{shown}'; use {_URL_FORMS}")
    if match[1] not in DRIVERS:  # e.g. postgresql+psycopg2: a driver steepy does not ship
        raise ValueError(f"unsupported driver `{match[1]}' in `{shown}': steepy talks to "
                         f"PostgreSQL through psycopg 3; use {_URL_FORMS}")
    return url
