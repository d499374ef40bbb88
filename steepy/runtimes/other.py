"""The `other` runtime: the executable's path is the program, its arguments follow."""

from __future__ import annotations

from steepy.model.processchain import Executable
from steepy.runtimes.seam import DIRECT, Launch, RuntimeContext
from steepy.runtimes.commands import argument_list


def other_argv(exe: Executable) -> list[str]:
    return [exe.path, *argument_list(exe.arguments)]


class OtherRuntime:
    supported_runtime = DIRECT

    def command(self, executable: Executable, context: RuntimeContext) -> Launch:
        return Launch(other_argv(executable))
