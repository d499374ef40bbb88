"""What the policy tests of `steepy validate` share: a folder with a service and a workflow
(and steepy.yaml), and validate run in-process."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from steepy.cli import main
from tests.documents.services import CP


def cp_service(retries: str) -> str:
    """tests/documents/services.CP with a `retries:' block (YAML, indented as a key of it)."""
    return CP + retries


def folder(tmp_path: Path, monkeypatch, files: dict[str, str]) -> Path:
    """`tmp_path' as the working directory, holding `files' (name -> text), with no steepy
    settings from the environment."""
    monkeypatch.chdir(tmp_path)
    for name in ("STEEPY_DB_URL", "STEEPY_SERVER", "STEEPY_SERVICES"):
        monkeypatch.delenv(name, raising=False)
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def validate(*files: str):
    return CliRunner().invoke(main, ["validate", *files], prog_name="steepy",
                              catch_exceptions=False)
