"""steepy.yaml: Steep's configuration keys (nested or dotted), overridable by environment.

Keys may be written with or without Steep's `steep.` prefix. Every key can be overridden by
`STEEPY_<KEY>` (or Steep's `STEEP_<KEY>`), upper-cased with dots as underscores, whose value
is read as YAML, e.g. `STEEPY_AGENT_INSTANCES=4`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from steepy.errors import InputError, Problem
from steepy.loading import read_file

DEFAULTS: dict[str, Any] = {
    "services": "services",
    "macros": "macros",
    "tmpPath": ".steepy/tmp",
    "outPath": ".steepy/out",
    "agent.instances": None,  # None: number of cores
    "agent.capabilities": [],
    "agent.killGracePeriod": "5s",
    "agent.outputLinesToCollect": 100,
    "logs.processChains.path": "logs/processchains",
    "logs.processChains.groupByPrefix": 0,
    "db.url": None,
    "controller.heartbeatInterval": "2s",  # how often an engine says it is alive
    "controller.leaseTimeout": "10s",  # silence after which its work is taken over
    "scheduler.lookupInterval": "2s",  # safety-net sweep; new work wakes it at once
    "http.host": "127.0.0.1",  # `steepy serve'; another address needs http.token
    "http.port": 8080,
    "http.token": None,  # bearer token every request but GET /health must carry
    "http.postMaxSize": 10485760,  # bytes (or e.g. "10 MB"); larger bodies get 413
}
FILE_NAME = "steepy.yaml"


def _flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in (data or {}).items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(_flatten(value, name + "."))
        else:
            out[name] = value
    return out


def _strip(key: str) -> str:
    for prefix in ("steepy.", "steep."):
        if key.startswith(prefix):
            return key[len(prefix):]
    return key


def _env_value(key: str) -> Any:
    for prefix in ("STEEPY_", "STEEP_"):
        raw = os.environ.get(prefix + key.upper().replace(".", "_"))
        if raw is not None:
            try:
                return yaml.safe_load(raw)
            except yaml.YAMLError:
                return raw
    return None


class Config(dict):
    """Flat configuration: dotted keys without the `steep.` prefix."""

    def __init__(self, values: dict[str, Any], source: str | None = None):
        super().__init__(values)
        self.source = source


def load_config(directory: str | os.PathLike = ".") -> Config:
    path = Path(directory) / FILE_NAME
    values = dict(DEFAULTS)
    source = None
    if path.is_file():
        document = read_file(path)
        if document.data is not None and not isinstance(document.data, dict):
            raise InputError(Problem("the configuration must be an object of keys and values",
                                     file=str(path), line=1, column=1))
        values.update({_strip(k): v for k, v in _flatten(document.data).items()})
        source = str(path)
    for key in list(values):
        override = _env_value(key)
        if override is not None:
            values[key] = override
    return Config(values, source)
