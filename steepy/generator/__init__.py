"""Process chain generation: from a workflow to chains of executables (reference 3.2)."""

from steepy.generator.chains import ConsistencyChecker
from steepy.generator.core import ProcessChainGenerator, Stop
from steepy.generator.executables import absolute_folder, common_directory, normalize_path
from steepy.generator.nodes import GeneratorError
from steepy.generator.simulate import SimulatedSteps, simulate, simulated_results
from steepy.generator.window import CHAIN_WINDOW

__all__ = ["CHAIN_WINDOW", "ConsistencyChecker", "GeneratorError", "ProcessChainGenerator",
           "SimulatedSteps", "Stop", "absolute_folder", "common_directory", "normalize_path",
           "simulate", "simulated_results"]
