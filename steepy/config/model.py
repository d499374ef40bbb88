"""The configuration's typed model: every key steepy reads, its type, default and checks
(pydantic), and Steep's keys that steepy knows but does not act on."""


from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (BeforeValidator, Field, PrivateAttr, ValidationError, ValidationInfo,
                      field_validator, model_validator)

from steepy.config.values import Duration, Int, Names, Paths, Size, duration_ms, no_bool
from steepy.model.durations import format_duration
from steepy.errors import InputError, Problem
from steepy.model.common import type_name as _kind
from steepy.config.notifications import NotificationsSettings
from steepy.config.retries import RetriesSettings
from steepy.config.section import S, Section, _leaves, groups_of
from steepy.config.gathering import FILE_NAME, OVERRIDE_KEY
from steepy.config.storage import DbSettings, LogsSettings


class AgentSettings(Section):
    instances: Annotated[int | None, BeforeValidator(no_bool)] = Field(None, ge=1)  # None: cores
    capabilities: Names = Field(default_factory=list)
    kill_grace_period: Duration = Field("5s", alias="killGracePeriod", ge=0)  # SIGTERM -> SIGKILL
    output_lines_to_collect: Int = Field(100, alias="outputLinesToCollect", ge=0)


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


class SchedulesSettings(Section):
    # missed fire times younger than this fire once (coalesced) after a downtime; older
    # ones are skipped and recorded
    grace_period: Duration = Field("1m", alias="gracePeriod", ge=0)


def _quartz(value: Any) -> Any:
    from steepy.model.triggers import quartz_cron

    if not isinstance(value, str):
        raise ValueError(f"expected a Quartz cron expression such as `0 0 0 * * ?', "
                         f"got {_kind(value)}")
    try:
        quartz_cron(value)
    except (ValueError, TypeError) as e:
        raise ValueError(f"`{value}' is not a Quartz cron expression: {e}") from None
    return value


OptionalDuration = Annotated[int | None, BeforeValidator(
    lambda v: None if v is None else duration_ms(v))]


class RetentionSettings(Section):
    submissions: OptionalDuration = None  # finished longer ago: deleted (None: never)
    results: OptionalDuration = None  # their outPath results too, if this long ago (None: never)

    @field_validator("results")
    @classmethod
    def _not_after_the_records(cls, value: int | None, info: ValidationInfo) -> int | None:
        records = info.data.get("submissions")
        if value is not None and records is not None and value > records:
            raise ValueError(f"{format_duration(value)} is longer than "
                             f"garbageCollector.retention.submissions ({format_duration(records)}"
                             "): results would outlive the records that name them")
        return value


class GarbageCollectorSettings(Section):
    enabled: bool = False
    cron: str = "0 0 0 * * ?"  # Quartz: daily, midnight
    retention: RetentionSettings = Field(default_factory=RetentionSettings)

    @field_validator("cron", mode="before")
    @classmethod
    def _cron(cls, value: Any) -> Any:
        """A Quartz expression. The default is not parsed at every start (that imports
        APScheduler's parser, and asyncio with it: 0.02 s of `steepy validate'); a test
        parses it."""
        return value if value == cls.model_fields["cron"].default else _quartz(value)


def _regex(value: Any) -> Any:
    if value is None:
        return value
    if not isinstance(value, str):
        raise ValueError(f"expected a regular expression such as `/|/services', got "
                         f"{_kind(value)}")
    try:
        re.compile(value)
    except re.error as e:
        raise ValueError(f"`{value}' is not a regular expression: {e}") from None
    return value


class HttpSettings(Section):
    host: str = Field("127.0.0.1", min_length=1)  # another address needs http.token
    port: Int = Field(8080, ge=0, le=65535)
    token: str | None = None  # bearer token of every request but GET /health
    post_max_size: Size = Field(10485760, alias="postMaxSize")  # larger bodies get 413
    steep_ui: str | None = Field(None, alias="steepUi")  # a build of Steep's web UI to serve
    base_path: str = Field("", alias="basePath")  # every route below this prefix (a proxy's)
    # only the routes whose path (Steep's spelling: /workflows/:id/?) this matches are served
    allow_routes: Annotated[str | None, BeforeValidator(_regex)] = Field(None, alias="allowRoutes")


class EnvironmentsSettings(Section):
    """`environments.*': where the Python environments services ask for are built and kept
    (one directory per environment; on a file system all agents share, each is built once)."""
    # where `python:' environments are kept, one directory each (relative: to the working
    # directory); for SLURM, or agents on several machines, a directory they all share
    path: str = Field(".steepy/envs", min_length=1)


class RuntimesSettings(Section):
    """`runtimes.default'; each runtime's own `runtimes.<name>' section is read generically
    (`Config.runtime_settings') against the settings class the runtime declares."""

    # the runtime that runs services whose runtime is Steep's `other' (e.g. `slurm': every
    # tool a SLURM job); None: `other' itself
    default: str | None = Field(None, min_length=1)


# Steep's plugin types steepy runs (steepy.plugins.kinds has their interfaces)
PLUGIN_TYPES = ("runtime", "outputAdapter", "inputAdapter", "processChainAdapter",
                "processChainConsistencyChecker", "progressEstimator", "initializer",
                "retryPolicy")
_OBJECT_REFERENCE = r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*"


class PluginDeclaration(Section):
    """One entry of `plugins': Steep's plugin descriptor, with `object' (a Python reference,
    `module:attribute') where Steep has the `scriptFile' of a Kotlin script."""

    name: str = Field(min_length=1)
    type: Literal[PLUGIN_TYPES]  # type: ignore[valid-type]
    object: str | None = None
    script_file: str | None = Field(None, alias="scriptFile")
    version: str | None = None
    supported_runtime: str | None = Field(None, alias="supportedRuntime", min_length=1)
    supported_data_type: str | None = Field(None, alias="supportedDataType", min_length=1)
    supported_service_ids: Names | None = Field(None, alias="supportedServiceIds")
    depends_on: Names = Field(default_factory=list, alias="dependsOn")

    @field_validator("object")
    @classmethod
    def _reference(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(_OBJECT_REFERENCE, value):
            raise ValueError(f"`{value}' is not a Python object reference such as "
                             "`package.module:attribute'")
        return value

    @model_validator(mode="after")
    def _needs_object(self) -> "PluginDeclaration":
        if self.object is None:
            hint = (" (Steep's Kotlin `scriptFile' cannot run in steepy)" if self.script_file
                    else "")
            raise ValueError(f"plugin `{self.name}' needs `object: module:attribute', the Python "
                             f"object that implements it{hint}")
        return self


class CacheConfig(Section):
    """`cache.*' (extensions 15): reuse of unchanged work."""

    enabled: bool = False  # every submission reuses earlier work (else only with --resume)
    mode: Literal["standard", "deep"] = "standard"  # files by size and time, or by content
    record: bool = True  # chains leave records a later submission may reuse


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
    schedules: SchedulesSettings = Field(default_factory=SchedulesSettings)
    garbage_collector: GarbageCollectorSettings = Field(default_factory=GarbageCollectorSettings,
                                                        alias="garbageCollector")
    runtimes: RuntimesSettings = Field(default_factory=RuntimesSettings)
    environments: EnvironmentsSettings = Field(default_factory=EnvironmentsSettings)
    # the plugins' descriptors, or (Steep's form) files or globs of files that hold lists of
    # descriptors, relative to the configuration's directory: `conf/plugins/*.yaml'
    plugins: list[PluginDeclaration] = Field(default_factory=list)
    # another file whose keys override this one's (read by steepy.config.reading)
    override_config_file: str | None = Field(None, alias=OVERRIDE_KEY, min_length=1)
    notifications: NotificationsSettings = Field(default_factory=NotificationsSettings)
    retries: RetriesSettings = Field(default_factory=RetriesSettings)  # extensions 1
    cache: CacheConfig = Field(default_factory=CacheConfig)  # extensions 15

    _source: str | None = PrivateAttr(None)
    _warnings: list[Problem] = PrivateAttr(default_factory=list)
    _plugin_places: list[Problem] = PrivateAttr(default_factory=list)
    _runtime_sections: Any = PrivateAttr(None)  # steepy.config.reading.RuntimeSections
    _origins: dict[str, Any] = PrivateAttr(default_factory=dict)  # key -> located.Origin
    # the keys as written (dotted: `steep.tmpPath'), as Steep's templates see them as `config'
    _written: dict[str, Any] = PrivateAttr(default_factory=dict)

    @property
    def written(self) -> dict[str, Any]:
        return self._written

    @property
    def source(self) -> str | None:  # the file read (None: none)
        return self._source

    @property
    def warnings(self) -> list[Problem]:
        """Unknown keys and keys of Steep that steepy does not implement (all ignored)."""
        return self._warnings

    def located(self, key: str, message: str) -> Problem:
        """A problem of the value of `key' (maybe with a tail such as `[1]'), at its
        file:line:column (or the variable that gave it)."""
        origin = self._origins.get(key.split("[", 1)[0])
        if origin is None:
            return Problem(message, path=key, file=self._source or FILE_NAME)
        return origin.problem(message, key)

    def plugin_place(self, index: int) -> Problem:
        """Where `plugins[index]' was declared (a Problem without message)."""
        places = self._plugin_places
        if index < len(places):
            return places[index]
        return Problem("", path=f"plugins[{index}]", file=self._source or FILE_NAME)

    def runtime_settings(self, runtime: str, model: type[S]) -> S:
        """`runtimes.<runtime>' checked against `model', the runtime's settings class (its
        fields are the keys); InputError with every problem at its file:line:column (or
        variable), an unknown key included."""
        if self._runtime_sections is None:  # not read by load_config: the defaults
            return runtime_defaults(runtime, model)
        return self._runtime_sections.settings(runtime, model)

    def runtime_setting_problems(self, runtimes: list[str]) -> list[Problem]:
        """Warnings for `runtimes.<name>' sections of a runtime none of `runtimes' is."""
        if self._runtime_sections is None:
            return []
        return self._runtime_sections.unused(runtimes)

    def flat(self) -> dict[str, Any]:
        """Every key (dotted, Steep's names) and its value."""
        return {key: self[key] for key in LEAVES}


def runtime_defaults(runtime: str, model: type[S]) -> S:
    """A runtime's settings where no configuration was read (a Config made in code, plugins
    loaded without one): the defaults of its class; InputError with a line per key the class
    requires (or whose default it refuses itself)."""
    try:
        return model()
    except ValidationError as e:
        aliases = {name: info.alias or name for name, info in model.model_fields.items()}
        raise InputError([Problem(
            f"is required (runtime `{runtime}' has no default for it)"
            if error["type"] == "missing" else f"its default is refused: {error['msg']}",
            path=".".join(["runtimes", runtime, *(str(aliases.get(part, part))
                                                  for part in error["loc"])]),
            file=FILE_NAME) for error in e.errors()]) from None


LEAVES = _leaves(Config)
GROUPS = groups_of(LEAVES)


def __getattr__(name: str) -> Any:
    """`DEFAULTS': every key and its default value, made when first asked for (it builds the
    checks of every group, which the commands that only read the database do not need)."""
    if name == "DEFAULTS":
        defaults = globals()["DEFAULTS"] = Config().flat()
        return defaults
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Steep's keys (reference §9) that steepy reads but does not act on: a warning each.
UNIMPLEMENTED = (
    "http.enabled",
    "http.cors", "controller.enabled", "controller.lookupInterval", "controller.lookupMaxErrors",
    "controller.lookupOrphansInterval", "controller.lookupOrphansInitialDelay",
    "scheduler.enabled", "scheduler.lookupOrphansInterval", "scheduler.lookupOrphansInitialDelay",
    "agent.enabled", "agent.id", "agent.autoShutdownTimeout", "agent.busyTimeout",
    "db.driver", "db.username", "db.password", "db.connectionPool",
    "cluster", "logs.level", "logs.main", "logs.processChains.enabled", "garbageCollector.retention.vms",
    "cloud", "cache.plugins",
)
NOT_YET: tuple[str, ...] = ()  # steepy's own keys (extensions.md) not built yet
