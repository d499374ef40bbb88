"""The generators of the reference pages (docs/hooks/reference.py, the hook mkdocs runs),
loaded for tests the way mkdocs loads them: by the file's path."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOOK = ROOT / "docs" / "hooks" / "reference.py"


def load():
    """The hook module; its generators are its attributes (ref_cli, ref_config, ...)."""
    if "steepy_docs_reference" in sys.modules:
        return sys.modules["steepy_docs_reference"]
    spec = importlib.util.spec_from_file_location("steepy_docs_reference", HOOK)
    module = importlib.util.module_from_spec(spec)
    sys.modules["steepy_docs_reference"] = module
    spec.loader.exec_module(module)
    return module
