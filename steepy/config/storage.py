"""The configuration's groups `db' (the database) and `logs' (where the chains' output is
kept), and reading them alone: the commands that only read the database (list, show, status,
logs, events, wait) check these two and nothing else, without the rest of the model
(steepy.config.model, which has them as `Config.db' and `Config.logs'; issue 31). When their
values are plain, those commands do not even come here (steepy.config.storage_plain)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Literal, Mapping

from pydantic import AfterValidator, Field, ValidationError

from steepy.config.gathering import FILE_NAME, OVERRIDE_KEY, empty_group, gather, not_a_group
from steepy.config.located import nest
from steepy.config.problems import problem_of
from steepy.config.section import Section, _leaves, groups_of
from steepy.config.storage_plain import KEYS
from steepy.config.urls import database_url
from steepy.config.values import Int
from steepy.errors import InputError


class ProcessChainLogs(Section):
    path: str = Field(KEYS["logs.processChains.path"][0], min_length=1)
    group_by_prefix: Int = Field(KEYS["logs.processChains.groupByPrefix"][0],
                                 alias="groupByPrefix", ge=0)
    # also in the database, so logs of chains run on other machines can be read anywhere
    # (None: when the database is PostgreSQL, i.e. shared by many machines)
    database: bool | None = KEYS["logs.processChains.database"][0]
    # `steep': each line starts with the time it was written, `yyyy-MM-dd HH:mm:ss - ' as in
    # Steep's logs; `plain': the tool's output as it printed it
    format: Literal["plain", "steep"] = KEYS["logs.processChains.format"][0]


class LogsSettings(Section):
    process_chains: ProcessChainLogs = Field(default_factory=ProcessChainLogs, alias="processChains")


class DbSettings(Section):
    url: Annotated[str | None, AfterValidator(database_url)] = KEYS["db.url"][0]


# the groups that can be read alone, by their key (Config's fields of these types: a test
# checks that they agree)
SECTIONS: dict[str, type[Section]] = {"db": DbSettings, "logs": LogsSettings}


def load_sections(names: tuple[str, ...] = tuple(SECTIONS), directory: str | os.PathLike = ".",
                  environ: Mapping[str, str] | None = None) -> dict[str, Section]:
    """Only the groups `names' (of SECTIONS) of the configuration, read and checked as
    load_config reads and checks them, with the same model and defaults. No other key is
    looked at, so a problem or an unknown key elsewhere neither stops them nor is shown.
    InputError with every problem of these groups, located."""
    environ = os.environ if environ is None else environ
    inside = tuple(f"{name}." for name in names)
    # with the key that names a file overriding them (a file name), which a variable may set
    leaves = {OVERRIDE_KEY: True}
    for name in names:
        leaves.update(_leaves(SECTIONS[name], f"{name}."))
    groups = groups_of(leaves)
    path, raw, origins, found = gather(Path(directory), environ, leaves)
    mine = {key: value for key, value in raw.items() if key in names or key.startswith(inside)}
    problems = [p for p in found  # (a whole file's problem has no path: kept)
                if not p.path or p.path in names or p.path.startswith(inside)]
    problems += [not_a_group(key, value, origins[key], leaves) for key, value in mine.items()
                 if key in groups and not empty_group(value)]
    sections: dict[str, Section] = {}
    for name in names:
        model = SECTIONS[name]
        values = {key[len(name) + 1:]: value for key, value in mine.items()
                  if key in leaves and key.startswith(name + ".")}
        try:
            sections[name] = model.model_validate(nest(values))
        except ValidationError as e:
            problems += [problem_of(error, origins, str(path or FILE_NAME), model, name + ".")
                         for error in e.errors()]
    if problems:
        raise InputError(problems)
    return sections
