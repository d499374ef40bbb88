"""The software a service asks for besides its tool (steepy, issue 27): a Python environment
(`python: {requirements: [...], version: "3.12"}') and HPC environment modules
(`modules: [gcc/12]'). A service carries them, and so does each executable made from it; the
agent provides them before each attempt (steepy.agent.software)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["PythonEnvironment", "write_tool_settings"]


@dataclass(frozen=True)
class PythonEnvironment:
    """A virtual environment with these requirements (pip's requirement specifiers, e.g.
    `idna==3.7') for this Python version (None: the one uv finds first)."""

    requirements: tuple[str, ...] = field(default_factory=tuple)
    version: str | None = None

    @classmethod
    def from_json(cls, data: dict | None) -> "PythonEnvironment | None":
        if data is None:
            return None
        version = data.get("version")
        return cls(tuple(str(r) for r in data.get("requirements") or []),
                   None if version is None else str(version))

    def to_json(self) -> dict:
        out: dict = {"requirements": list(self.requirements)}
        if self.version is not None:
            out["version"] = self.version
        return out

    def digest(self, machine: str) -> str:
        """sha256 of what was asked and the machine type it is built for (an environment on
        a shared file system serves every machine of that type): its directory's name."""
        asked = json.dumps({**self.to_json(), "machine": machine}, sort_keys=True,
                           separators=(",", ":"))
        return hashlib.sha256(asked.encode()).hexdigest()


def write_tool_settings(out: dict, owner: Any) -> None:
    """How a tool is run, as a service declares it and its executables carry it on: its
    environment, the variables passed through, its Python and modules, whether its outputs
    are checked and how it is cached (each only where it differs from the default)."""
    if owner.environment:
        out["environment"] = dict(owner.environment)
    if owner.pass_environment:
        out["passEnvironment"] = list(owner.pass_environment)
    if owner.python is not None:
        out["python"] = owner.python.to_json()
    if owner.modules:
        out["modules"] = list(owner.modules)
    if not owner.check_outputs:
        out["checkOutputs"] = False
    if owner.cache is not None:
        out["cache"] = False if owner.cache == "false" else owner.cache
