"""Dry runs: drive a generator to the end as if every chain succeeded (`steepy plan --all`)."""

from __future__ import annotations

from collections.abc import Callable

from steepy.generator.core import ProcessChainGenerator
from steepy.generator.nodes import GeneratorError
from steepy.model.ids import unique_id
from steepy.model import Macro, ProcessChain, Service, Workflow
from steepy.model.processchain import DATA_TYPE_DIRECTORY


class SimulatedSteps(list):
    """The chains of every step (a list of lists); `finished` tells whether the generator
    ran out of actions (False: some action never got its inputs)."""

    finished: bool = False


def simulated_results(chains: list[ProcessChain]) -> tuple[dict[str, list], set[str]]:
    """What the chains would report: each output variable with its file (a directory output
    reports one file inside it), and the ids of all their executables."""
    results: dict[str, list] = {}
    executed: set[str] = set()
    for chain in chains:
        for executable in chain.executables:
            executed.add(executable.id)
            for arg in executable.arguments:
                if arg.type != "output":
                    continue
                value = arg.variable.value
                if arg.data_type == DATA_TYPE_DIRECTORY:
                    value = value.rstrip("/") + "/file1"
                results.setdefault(arg.variable.id, []).append(value)
    return results, executed


def simulate(workflow: Workflow, services: dict[str, Service],
             macros: dict[str, Macro] | None = None, tmp_path: str = "/tmp",
             out_path: str = "/out", id_generator: Callable[[], str] = unique_id, *,
             loop_rounds: int = 1, max_steps: int = 10_000,
             feedback: Callable[[list[ProcessChain]], tuple[dict[str, list], set[str]]] = (
                 simulated_results)) -> SimulatedSteps:
    """Generate all chains of `workflow`, feeding back simulated results after each step
    (`feedback`: what the chains of a step report, by default `simulated_results`).

    A recursive for-each (yieldToInput) would loop for ever on simulated results, so values
    are fed back only `loop_rounds` times per original item.
    """
    generator = ProcessChainGenerator(workflow, tmp_path, out_path, services, macros,
                                      id_generator=id_generator)
    generator.loop_round_limit = loop_rounds
    steps = SimulatedSteps()
    results: dict[str, list] = {}
    executed: set[str] = set()
    for _ in range(max_steps):
        chains = generator.generate(results, executed)
        if not chains:
            steps.finished = generator.is_finished()
            return steps
        steps.append(chains)
        results, executed = feedback(chains)
    raise GeneratorError(f"the simulation did not end after {max_steps} steps")
