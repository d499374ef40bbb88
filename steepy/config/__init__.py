"""The configuration, checked like workflows are: `steepy.yaml` in the working directory, or
only when that is absent Steep's `steep.yaml` (or `conf/steep.yaml`); keys nested or dotted,
with or without `steep.`; then `STEEPY_<KEY>` (or Steep's `STEEP_<KEY>`) variables, upper-cased
with dots as underscores, read as YAML (`STEEPY_AGENT_INSTANCES=4`).

`load_config()` returns a typed `Config` that also answers dotted look-ups (`config["tmpPath"]`,
`config.get("http.token")`). Bad values are `Problem`s at their file:line:column (or variable)
in one `InputError`; ignored keys are located `Config.warnings`.

The names below are imported when first used: a module of steepy.config imported alone does
not bring the others (issue 31: `steepy list' reads `db' and `logs' with
`storage_plain.plain_storage', without pydantic, else with `load_sections').
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from steepy import lazy_attributes

_HOMES = {"DEFAULTS": "steepy.config.model", "FILE_NAME": "steepy.config.model",
          "Config": "steepy.config.model", "config_file": "steepy.config.gathering",
          "load_config": "steepy.config.reading", "load_sections": "steepy.config.storage",
          "parse_size": "steepy.config.values"}

__all__ = sorted(_HOMES)

__getattr__, __dir__ = lazy_attributes(globals(), _HOMES)

if TYPE_CHECKING:  # what type checkers see
    from steepy.config.model import DEFAULTS, FILE_NAME, Config  # noqa: F401
    from steepy.config.gathering import config_file  # noqa: F401
    from steepy.config.reading import load_config  # noqa: F401
    from steepy.config.storage import load_sections  # noqa: F401
    from steepy.config.values import parse_size  # noqa: F401
