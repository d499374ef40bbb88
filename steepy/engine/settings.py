"""An engine's settings from the (checked) configuration: the one place that reads
`steepy.yaml`'s keys into `EngineSettings` (`steepy run`, `steepy worker`, `steepy serve` and
the Python API's `steepy.run` all come here)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from steepy.agent import AgentConfig
from steepy.engine.engine import EngineSettings
from steepy.engine.housekeeping import GcSettings
from steepy.engine.reuse import CacheSettings
from steepy.notifications.delivery import DeliverySettings

if TYPE_CHECKING:
    from steepy.config import Config
    from steepy.plugins.pluginset import PluginSet


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
