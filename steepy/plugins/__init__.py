"""Plugins: Steep's plugin kinds (reference section 11) as small Python interfaces.

    kinds      the interfaces (OutputAdapter, ...; a runtime's, Runtime, Launch, RuntimeContext
               and RuntimeSettings, are steepy.runtimes.seam's, re-exported here)
    loading    finding plugins (steepy's own, entry points, steepy.yaml) and checking them
    loaded     the loaded plugins (`PluginSet') and what the agent and the controller ask them
    pluginset  loading them with the configuration; the process's set

Entry-point groups (the entry point's name is the plugin's name): `steepy.runtimes`,
`steepy.outputAdapters`, `steepy.inputAdapters`, `steepy.processChainAdapters`,
`steepy.processChainConsistencyCheckers`, `steepy.progressEstimators`, `steepy.initializers`.
Only `kinds` is imported here, so that importing an interface loads no plugin.
"""

from steepy.plugins.kinds import (KINDS, Initializer, InputAdapter, Launch, OutputAdapter,
                                  ProcessChainAdapter, ProcessChainConsistencyChecker,
                                  ProgressEstimator, Runtime, RuntimeContext, RuntimeSettings)

__all__ = ["KINDS", "Initializer", "InputAdapter", "Launch", "OutputAdapter",
           "ProcessChainAdapter", "ProcessChainConsistencyChecker", "ProgressEstimator",
           "Runtime", "RuntimeContext", "RuntimeSettings"]
