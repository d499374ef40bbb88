"""steepy's data model: Steep's workflows, services, macros, process chains and submissions."""

from steepy.model.macro import Macro, MacroParameter
from steepy.model.policies import RetryPolicy, TimeoutPolicy
from steepy.model.processchain import Argument, ArgumentVariable, Executable, ProcessChain
from steepy.model.service import Cardinality, RuntimeArgument, Service, ServiceParameter
from steepy.model.submission import ProcessChainStatus, Submission, SubmissionStatus
from steepy.model.workflow import (
    Action,
    ExecuteAction,
    Fallback,
    ForEachAction,
    IncludeAction,
    IncludeOutputParameter,
    InputParameter,
    OutputParameter,
    Variable,
    Workflow,
)

__all__ = [
    "Action", "Argument", "ArgumentVariable", "Cardinality", "ExecuteAction", "Executable", "Fallback",
    "ForEachAction", "IncludeAction", "IncludeOutputParameter", "InputParameter", "Macro",
    "MacroParameter", "OutputParameter", "ProcessChain", "ProcessChainStatus", "RetryPolicy",
    "RuntimeArgument", "Service", "ServiceParameter", "Submission", "SubmissionStatus",
    "TimeoutPolicy", "Variable", "Workflow",
]
