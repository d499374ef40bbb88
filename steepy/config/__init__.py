"""The configuration, checked like workflows are: `steepy.yaml` in the working directory, or
only when that is absent Steep's `steep.yaml` (or `conf/steep.yaml`); keys nested or dotted,
with or without `steep.`; then `STEEPY_<KEY>` (or Steep's `STEEP_<KEY>`) variables, upper-cased
with dots as underscores, read as YAML (`STEEPY_AGENT_INSTANCES=4`).

`load_config()` returns a typed `Config` that also answers dotted look-ups (`config["tmpPath"]`,
`config.get("http.token")`). Bad values are `Problem`s at their file:line:column (or variable)
in one `InputError`; ignored keys are located `Config.warnings`.
"""

from steepy.config.model import DEFAULTS, FILE_NAME, Config
from steepy.config.values import parse_size
from steepy.config.reading import config_file, load_config

__all__ = ["DEFAULTS", "FILE_NAME", "Config", "config_file", "load_config", "parse_size"]
