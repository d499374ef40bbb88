"""The process-chain generator with the plugins that shape chains (reference section 11):
consistency checkers decide whether an action may join the chain being built, output
adapters end a chain at the executable whose output they handle, and process chain adapters
may change the generated chains before they are stored."""

from __future__ import annotations

from collections.abc import Collection

from steepy.generator import ProcessChainGenerator
from steepy.model import Macro, ProcessChain, Service, Workflow
from steepy.plugins.loaded import PluginSet


class PluginGenerator(ProcessChainGenerator):
    def __init__(self, workflow: Workflow, tmp_path: str, out_path: str,
                 services: dict[str, Service], macros: dict[str, Macro] | None = None, *,
                 plugins: PluginSet) -> None:
        super().__init__(workflow, tmp_path, out_path, services, macros,
                         consistency_checker=plugins.consistency_checker(workflow),
                         output_adapters=plugins.output_data_types(),
                         engine_retries=plugins.retries.default)  # steepy.yaml's default
        self.plugins = plugins
        self.workflow = workflow

    def generate(self, results: dict[str, list] | None = None,
                 executed_executable_ids: Collection[str] | None = None,
                 *stopped_and_ended: Collection) -> list[ProcessChain]:
        chains = super().generate(results, executed_executable_ids, *stopped_and_ended)
        return self.plugins.adapt_chains(chains, self.workflow)
