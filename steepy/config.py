"""The configuration, checked like workflows are: `steepy.yaml` in the working directory, or
only when that is absent Steep's `steep.yaml` (or `conf/steep.yaml`); keys nested or dotted,
with or without `steep.`; then `STEEPY_<KEY>` (or Steep's `STEEP_<KEY>`) variables, upper-cased
with dots as underscores, read as YAML (`STEEPY_AGENT_INSTANCES=4`).

`load_config()` returns a typed `Config` that also answers dotted look-ups (`config["tmpPath"]`,
`config.get("http.token")`). Bad values are `Problem`s at their file:line:column (or variable)
in one `InputError`; ignored keys are located `Config.warnings`.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from types import NoneType, UnionType
from typing import Annotated, Any, Literal, Mapping, Union, get_args, get_origin

import yaml
from pydantic import (BaseModel, BeforeValidator, ConfigDict, Field, PrivateAttr,
                      ValidationError, ValidationInfo, field_validator)

from steepy.durations import DurationError, format_duration, parse_duration
from steepy.errors import InputError, Problem, json_path
from steepy.loading import Document, read_file
from steepy.model.common import type_name as _kind

FILE_NAME = "steepy.yaml"
STEEP_FILES = ("steep.yaml", "conf/steep.yaml")  # read only when there is no steepy.yaml
ENV_PREFIXES = ("STEEPY_", "STEEP_")  # the first one set wins


def _strip(key: str) -> str:
    for prefix in ("steepy.", "steep."):
        if key.startswith(prefix):
            return key[len(prefix):]
    return key


# ---------------------------------------------------------------- value types

_MISSING = object()


def _no_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError(f"expected a whole number, got a boolean `{str(value).lower()}'")
    return value


def _duration(value: Any) -> int:
    """Steep's duration grammar, unit required (configuration values call toDuration())."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"expected a duration such as `5s' or `250ms', got {_kind(value)}")
    text = str(value)
    try:
        return parse_duration(text)
    except DurationError as e:
        bare = text.strip()
        hint = (f"; a duration here needs a unit, e.g. `{bare}s' or `{bare}ms'" if bare.isdigit()
                else "; e.g. `5s', `250ms' or `1m 30s'")
        raise ValueError(f"`{text}' is not a duration: {e}{hint}") from None


_SIZE = re.compile(r"\s*(\d+)\s*([kmg]?)(i?b)?\s*", re.IGNORECASE)


def parse_size(value: Any) -> int:
    """Bytes from a positive integer or a size such as `10 MB' (10^6), `10MiB' (2^20) or
    `512k'; ValueError otherwise."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    match = _SIZE.fullmatch(value) if isinstance(value, str) else None
    if not match or int(match[1]) <= 0:
        raise ValueError(f"`{value}' is not a size like 10485760 or `10 MB'")
    power = "kmg".find(match[2].lower()) + 1 if match[2] else 0
    base = 1024 if (match[3] or "").lower() == "ib" else 1000
    return int(match[1]) * base**power


def _capabilities(value: Any) -> Any:
    """A YAML list, or one string of comma-separated names (`gpu' or `gpu,docker')."""
    if isinstance(value, str):
        return [name.strip() for name in value.split(",") if name.strip()]
    return [] if value is None else value


def _string_list(value: Any) -> Any:
    """A list of strings; one string is a list of one (docker's `-e A=1,2' has commas)."""
    return [] if value is None else [value] if isinstance(value, str) else value


def _paths(value: Any) -> Any:
    """A file, folder or glob, or a list of them (services, macros); null: none."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if value is None or isinstance(value, str) and value or (
            isinstance(value, list) and all(isinstance(v, str) and v for v in value)):
        return [] if value is None else value
    raise ValueError("expected a file, folder or glob, or a list of them, "
                     f"got {_kind(value)}{'' if value else ' (empty)'}")


Int = Annotated[int, BeforeValidator(_no_bool)]
Duration = Annotated[int, BeforeValidator(_duration)]  # milliseconds
Size = Annotated[int, BeforeValidator(parse_size)]  # bytes
Names = Annotated[list[str], BeforeValidator(_capabilities)]
Strings = Annotated[list[str], BeforeValidator(_string_list)]
Paths = Annotated[str | list[str], BeforeValidator(_paths)]

# ---------------------------------------------------------------- the model


class Section(BaseModel):
    """A group of keys; field aliases are Steep's key names."""
    model_config = ConfigDict(populate_by_name=True, validate_default=True, frozen=True,
                              coerce_numbers_to_str=True, extra="forbid")

    def __getitem__(self, key: str) -> Any:
        """A value by its dotted key, e.g. `agent.instances' (with or without `steep.')."""
        node: Any = self
        for part in _strip(key).split("."):
            names = _attribute_names(type(node)) if isinstance(node, Section) else {}
            if part not in names:
                raise KeyError(key)
            node = getattr(node, names[part])
        return node

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key, _MISSING) is not _MISSING


class AgentSettings(Section):
    instances: Annotated[int | None, BeforeValidator(_no_bool)] = Field(None, ge=1)  # None: cores
    capabilities: Names = Field(default_factory=list)
    kill_grace_period: Duration = Field("5s", alias="killGracePeriod", ge=0)  # SIGTERM -> SIGKILL
    output_lines_to_collect: Int = Field(100, alias="outputLinesToCollect", ge=0)


class ProcessChainLogs(Section):
    path: str = Field("logs/processchains", min_length=1)
    group_by_prefix: Int = Field(0, alias="groupByPrefix", ge=0)


class LogsSettings(Section):
    process_chains: ProcessChainLogs = Field(default_factory=ProcessChainLogs, alias="processChains")


class DbSettings(Section):
    url: str | None = None  # None: sqlite:///.steepy/steepy.db


class ControllerSettings(Section):
    heartbeat_interval: Duration = Field("2s", alias="heartbeatInterval", gt=0)  # "I am alive"
    lease_timeout: Duration = Field("10s", alias="leaseTimeout", gt=0)  # silence -> taken over

    @field_validator("lease_timeout")
    @classmethod
    def _longer_than_heartbeat(cls, value: int, info: ValidationInfo) -> int:
        heartbeat = info.data.get("heartbeat_interval")
        if heartbeat is not None and value <= heartbeat:
            raise ValueError(f"{format_duration(value)} must be longer than "
                             f"controller.heartbeatInterval ({format_duration(heartbeat)}), or "
                             "live engines would take over each other's work")
        return value


class SchedulerSettings(Section):
    lookup_interval: Duration = Field("2s", alias="lookupInterval", gt=0)  # safety-net sweep


class HttpSettings(Section):
    host: str = Field("127.0.0.1", min_length=1)  # another address needs http.token
    port: Int = Field(8080, ge=0, le=65535)
    token: str | None = None  # bearer token of every request but GET /health
    post_max_size: Size = Field(10485760, alias="postMaxSize")  # larger bodies get 413


class DockerSettings(Section):
    pull: Literal["auto", "always", "missing", "never"] = "auto"
    env: Strings = Field(default_factory=list)  # `-e' entries of docker run
    volumes: Strings = Field(default_factory=list)  # `-v' entries of docker run


class RuntimesSettings(Section):
    docker: DockerSettings = Field(default_factory=DockerSettings)


class Config(Section):
    services: Paths = "services"
    macros: Paths = "macros"
    tmp_path: str = Field(".steepy/tmp", alias="tmpPath", min_length=1)
    out_path: str = Field(".steepy/out", alias="outPath", min_length=1)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    logs: LogsSettings = Field(default_factory=LogsSettings)
    db: DbSettings = Field(default_factory=DbSettings)
    controller: ControllerSettings = Field(default_factory=ControllerSettings)
    scheduler: SchedulerSettings = Field(default_factory=SchedulerSettings)
    http: HttpSettings = Field(default_factory=HttpSettings)
    runtimes: RuntimesSettings = Field(default_factory=RuntimesSettings)

    _source: str | None = PrivateAttr(None)
    _warnings: list[Problem] = PrivateAttr(default_factory=list)

    @property
    def source(self) -> str | None:  # the file read (None: none)
        return self._source

    @property
    def warnings(self) -> list[Problem]:
        """Unknown keys and keys of Steep that steepy does not implement (all ignored)."""
        return self._warnings

    def flat(self) -> dict[str, Any]:
        """Every key (dotted, Steep's names) and its value."""
        return {key: self[key] for key in LEAVES}


def _attribute_names(model: type[Section]) -> dict[str, str]:
    return {**{name: name for name in model.model_fields},
            **{f.alias: name for name, f in model.model_fields.items() if f.alias}}


def _leaves(model: type[Section], prefix: str = "") -> dict[str, bool]:
    """Every dotted key below `model` -> whether its value is a plain string."""
    out: dict[str, bool] = {}
    for name, info in model.model_fields.items():
        key = prefix + (info.alias or name)
        if isinstance(info.annotation, type) and issubclass(info.annotation, Section):
            out.update(_leaves(info.annotation, key + "."))
        else:
            kinds = (get_args(info.annotation) if get_origin(info.annotation) in (Union, UnionType)
                     else (info.annotation,))
            out[key] = set(kinds) <= {str, NoneType}
    return out


LEAVES = _leaves(Config)
GROUPS = {key.rsplit(".", i)[0] for key in LEAVES for i in range(1, key.count(".") + 1)}
DEFAULTS: dict[str, Any] = Config().flat()

# Steep's keys (reference §9) that steepy reads but does not act on: a warning each.
UNIMPLEMENTED = (
    "plugins", "overrideConfigFile", "http.enabled", "http.basePath", "http.allowRoutes",
    "http.cors", "controller.enabled", "controller.lookupInterval", "controller.lookupMaxErrors",
    "controller.lookupOrphansInterval", "controller.lookupOrphansInitialDelay",
    "scheduler.enabled", "scheduler.lookupOrphansInterval", "scheduler.lookupOrphansInitialDelay",
    "agent.enabled", "agent.id", "agent.autoShutdownTimeout", "agent.busyTimeout",
    "runtimes.kubernetes", "db.driver", "db.username", "db.password", "db.connectionPool",
    "cluster", "logs.level", "logs.main", "logs.processChains.enabled", "garbageCollector",
    "cloud", "cache",
)
NOT_YET = ("notifications",)  # extensions.md §12, not built yet

# ---------------------------------------------------------------- reading


@dataclass
class _Origin:
    """Where a value came from: a path in a document, or an environment variable."""

    document: Document | None = None
    path: str = ""
    variable: str | None = None

    def problem(self, message: str, key: str) -> Problem:
        """A problem about `key` (maybe with a tail such as `[1]') located here."""
        if self.document is None:
            return Problem(message, path=key, file=f"${self.variable}")
        tail = key[len(_base(key)):]
        return replace(self.document.locate(Problem(message, path=self.path + tail)), path=key)


def _base(key: str) -> str:
    return key.split("[", 1)[0]  # `agent.capabilities[1]' -> `agent.capabilities'


def config_file(directory: str | os.PathLike = ".") -> Path | None:
    """steepy.yaml, else Steep's steep.yaml (or conf/steep.yaml), else None."""
    return next((p for p in (Path(directory) / n for n in (FILE_NAME, *STEEP_FILES))
                 if p.is_file()), None)


def _read(path: Path) -> Document | None:
    try:
        lines = path.read_text(encoding="utf-8-sig", errors="replace").splitlines()
    except OSError:
        lines = ["?"]  # read_file says why
    if all(not line.strip() or line.lstrip().startswith("#") for line in lines):
        return None  # nothing but comments: all defaults
    document = read_file(path)
    if document.data is not None and not isinstance(document.data, dict):
        raise InputError(Problem("the configuration must be an object of keys and values",
                                 file=str(path), line=1, column=1))
    return document


def _collect(document: Document, data: dict, prefix: str, raw: dict, origins: dict,
             problems: list[Problem]) -> None:
    """Flatten nested and dotted keys (leaves keep their value, even an object or a list)."""
    for name, value in data.items():
        path = f"{prefix}{name}"
        key = _strip(path)
        if isinstance(value, dict) and value and key not in LEAVES:
            _collect(document, value, path + ".", raw, origins, problems)
            continue
        if key in raw:
            first = origins[key].problem("", key)
            problems.append(_Origin(document, path).problem(
                f"set a second time (first at {first.location()})", key))
            continue
        raw[key] = value
        origins[key] = _Origin(document, path)


def _environment(environ: Mapping[str, str], raw: dict, origins: dict) -> None:
    """STEEPY_<KEY> / STEEP_<KEY> values, read as YAML, override the file's."""
    for key, is_text in LEAVES.items():
        for prefix in ENV_PREFIXES:
            variable = prefix + key.upper().replace(".", "_")
            text = environ.get(variable)
            if text is None or not text.strip():
                continue
            try:
                value = yaml.safe_load(text)
            except yaml.YAMLError:
                value = text
            if is_text and not isinstance(value, str):
                value = text  # a token `00123' stays a string, not the number 123
            raw[key] = value
            origins[key] = _Origin(variable=variable)
            break


def _ignored(raw: dict, origins: dict, problems: list[Problem]) -> list[Problem]:
    """Warnings for the keys no field takes: unknown ones, and Steep's that steepy lacks
    (a group such as `agent' given a plain value is a problem)."""
    warnings: list[Problem] = []
    grouped: dict[str, list[str]] = {}
    for key in list(raw):
        if key in LEAVES:
            continue
        value = raw.pop(key)
        if (key in GROUPS or key in ("steep", "steepy")) and value in (None, {}, []):
            continue  # `agent:' with nothing below it
        unimplemented = next((p for p in UNIMPLEMENTED + NOT_YET
                              if key == p or key.startswith(p + ".")), None)
        if unimplemented:
            grouped.setdefault(unimplemented, []).append(key)
            continue
        origin = origins[key]
        if key in GROUPS:
            below = ", ".join(k for k in LEAVES if k.startswith(key + "."))
            problems.append(origin.problem(f"expected an object with the keys {below}, "
                                           f"got {_kind(value)}", key))
            continue
        close = difflib.get_close_matches(key, list(LEAVES) + list(UNIMPLEMENTED), n=1)
        close = close or [k for k in LEAVES if k.lower() == key.lower()]
        hint = f"; did you mean {close[0]}?" if close else ""
        warnings.append(origin.problem(f"unknown key (ignored){hint}", key))
    for prefix, keys in grouped.items():
        what = ("steepy does not implement it yet" if prefix in NOT_YET
                else "a setting of Steep that steepy does not implement")
        others = f" (also {', '.join(keys[1:])})" if len(keys) > 1 else ""
        warnings.append(origins[keys[0]].problem(f"{what}; ignored{others}", keys[0]))
    return warnings


def _nest(flat: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in flat.items():
        *parents, last = key.split(".")
        node = out
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return out


_MESSAGES = {
    "int_parsing": "expected a whole number, got {kind} `{input}'",
    "int_type": "expected a whole number, got {kind}",
    "int_from_float": "expected a whole number, got `{input}'",
    "string_type": "expected a string, got {kind}",
    "list_type": "expected a list, got {kind}",
    "greater_than_equal": "must be at least {ge}, got {input}",
    "greater_than": "must be more than {gt}, got {input}",
    "less_than_equal": "must be at most {le}, got {input}",
    "string_too_short": "must not be empty",
    "literal_error": "`{input}' is not allowed here; expected {allowed}",
}


def _problem(error: Any, origins: dict[str, _Origin], fallback: str) -> Problem:
    """A pydantic error as a Problem at the place its value came from."""
    loc, model = list(error["loc"]), Config
    for i, part in enumerate(loc):  # field names (a default's errors) -> Steep's names
        name = _attribute_names(model).get(part) if isinstance(part, str) else None
        if name is None:
            break
        info = model.model_fields[name]
        loc[i], model = info.alias or name, info.annotation
        if not (isinstance(model, type) and issubclass(model, Section)):
            break
    cut = next((i for i in range(len(loc), 0, -1)
                if ".".join(map(str, loc[:i])) in LEAVES), len(loc))
    tail = json_path(loc[cut:])
    key = ".".join(map(str, loc[:cut])) + ("." if tail and tail[0] != "[" else "") + tail
    template = _MESSAGES.get(error["type"])
    if template:
        context = error.get("ctx", {})
        allowed = context.get("expected", "").replace("'", "")
        message = template.format(kind=_kind(error.get("input")), input=error.get("input"),
                                  allowed=allowed, **context)
    else:
        message = re.sub(r"^Value error, ", "", error["msg"])
    origin = origins.get(_base(key))
    if origin is None:  # a default that clashes with a value given next to it
        section = key.rsplit(".", 1)[0] + "."
        origin = next((o for k, o in origins.items() if k in LEAVES and k.startswith(section)),
                      None)
    if origin is None:
        return Problem(message, path=key, file=fallback)
    return origin.problem(message, key)


def load_config(directory: str | os.PathLike = ".",
                environ: Mapping[str, str] | None = None) -> Config:
    """The checked configuration of `directory`; InputError with every problem located."""
    environ = os.environ if environ is None else environ
    path = config_file(directory)
    document = _read(path) if path is not None else None
    raw: dict[str, Any] = {}
    origins: dict[str, _Origin] = {}
    problems: list[Problem] = []
    if document is not None and document.data:
        _collect(document, document.data, "", raw, origins, problems)
    _environment(environ, raw, origins)
    warnings = _ignored(raw, origins, problems)
    config = None
    try:
        config = Config.model_validate(_nest(raw))
    except ValidationError as e:
        problems += [_problem(error, origins, str(path or FILE_NAME)) for error in e.errors()]
    if problems:
        error = InputError(problems)
        error.warnings = warnings  # type: ignore[attr-defined]  # shown with the problems
        raise error
    assert config is not None
    config._source = None if path is None else str(path)
    config._warnings = warnings
    return config
