"""The software a service asks for besides its tool (steepy, issue 27): a Python environment
(`python: {requirements: [...], version: "3.12"}') and HPC environment modules
(`modules: [gcc/12]'). A service carries them, and so does each executable made from it; the
agent provides them before each attempt (steepy.agent.software)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

__all__ = ["PythonEnvironment"]


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
