"""An engine's settings (`EngineSettings`: its folders, agents, heartbeat and lease, and the
settings of its parts), and the one place that reads them from the (checked) configuration,
`steepy.yaml`'s keys (`steepy run`, `steepy worker`, `steepy serve` and the Python API's
`steepy.run` all come here)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from steepy.agent import AgentConfig
from steepy.engine.housekeeping import GcSettings
from steepy.engine.reuse import CacheSettings
from steepy.notifications.delivery import DeliverySettings

if TYPE_CHECKING:
    from steepy.config import Config
    from steepy.plugins.pluginset import PluginSet


@dataclass
class EngineSettings:
    tmp_path: str = ".steepy/tmp"
    out_path: str = ".steepy/out"
    agents: int = 0  # 0: number of cores
    capabilities: list[str] = field(default_factory=list)
    agent: AgentConfig = field(default_factory=AgentConfig)
    heartbeat_s: float = 2.0  # how often this engine says it is alive
    lease_s: float = 10.0  # silence after which its agents and submissions are taken over
    fence_tools: bool | None = None  # tools stop as the lease lapses (None: on PostgreSQL)
    sweep_s: float = 2.0  # safety net: every part looks at least this often (`_sweep')
    logs_in_database: bool | None = None  # chains' logs also in the database (None: PostgreSQL)
    schedule_grace_s: float = 60.0  # missed fire times younger than this fire once, coalesced
    gc: GcSettings | None = None  # the garbage collector (None: disabled)
    notifications: DeliverySettings = field(default_factory=DeliverySettings)  # webhooks
    cache: CacheSettings = field(default_factory=CacheSettings)  # reusable work (ext. 15)


def settings_from_config(config: "Config", plugins: "PluginSet",
                         agents: int | None = None) -> EngineSettings:
    """The engine's and its agents' settings; `agents` (None: `agent.instances`, else one per
    core) is how many chains run at once."""
    notifications = config.notifications
    return EngineSettings(tmp_path=config.tmp_path, out_path=config.out_path,
                          agents=agents or config.agent.instances or 0,
                          capabilities=list(config.agent.capabilities),
                          agent=AgentConfig.from_config(config, plugins),
                          heartbeat_s=config.controller.heartbeat_interval / 1000,
                          lease_s=config.controller.lease_timeout / 1000,
                          sweep_s=config.scheduler.lookup_interval / 1000,
                          logs_in_database=config.logs.process_chains.database,
                          schedule_grace_s=config.schedules.grace_period / 1000,
                          gc=(GcSettings.from_config(config)
                              if config.garbage_collector.enabled else None),
                          cache=CacheSettings(config.cache.enabled, config.cache.mode,
                                              config.cache.record),
                          notifications=DeliverySettings(
                              subscribers=notifications.subscribers(),
                              max_attempts=notifications.max_attempts,
                              delay_ms=notifications.delay, max_delay_ms=notifications.max_delay,
                              timeout_s=notifications.timeout / 1000))
