"""Plugins: Steep's plugin kinds (reference section 11) as small Python interfaces.

    kinds      the interfaces (Runtime, OutputAdapter, ...), Launch and RuntimeContext
    loading    finding plugins (steepy's own, entry points, steepy.yaml) and checking them
    pluginset  the process's plugins and what the agent and the controller ask them

Entry-point groups (the entry point's name is the plugin's name): `steepy.runtimes`,
`steepy.outputAdapters`, `steepy.inputAdapters`, `steepy.processChainAdapters`,
`steepy.processChainConsistencyCheckers`, `steepy.progressEstimators`, `steepy.initializers`.
Only `kinds` is imported here: runtimes import it, and the plugin set imports the runtimes.
"""

from steepy.plugins.kinds import (KINDS, Initializer, InputAdapter, Launch, OutputAdapter,
                                  ProcessChainAdapter, ProcessChainConsistencyChecker,
                                  ProgressEstimator, Runtime, RuntimeContext)

__all__ = ["KINDS", "Initializer", "InputAdapter", "Launch", "OutputAdapter",
           "ProcessChainAdapter", "ProcessChainConsistencyChecker", "ProgressEstimator",
           "Runtime", "RuntimeContext"]
