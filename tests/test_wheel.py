"""steepy as users install it: a wheel in a fresh virtualenv validates files (its schemas are
package data) and creates a database (its migrations travel with it), from any directory."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

from tests.conftest import ROOT
import pytest

pytestmark = [pytest.mark.process, pytest.mark.slow]


def _run(args: list, **kw) -> subprocess.CompletedProcess:
    # a PYTHONPATH of the caller (a checkout run from elsewhere) would hide the wheel
    kw["env"] = {k: v for k, v in kw.get("env", os.environ).items() if k != "PYTHONPATH"}
    return subprocess.run(args, capture_output=True, text=True, timeout=600, **kw)


def test_an_installed_wheel_validates_and_migrates(tmp_path: Path) -> None:
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet",
                  "--disable-pip-version-check", "-w", str(tmp_path / "dist"), str(ROOT)])
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("steepy-*.whl")
    venv = tmp_path / "venv"
    assert _run([sys.executable, "-m", "venv", "--without-pip", str(venv)]).returncode == 0
    site = Path(_run([str(venv / "bin" / "python"), "-c",
                      "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    # the dependencies come from the test environment (not downloaded again); steepy from
    # the wheel only: the project's own editable install is not visible from there
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    installed = _run([sys.executable, "-m", "pip", "install", "--no-deps", "--quiet",
                      "--disable-pip-version-check", "--target", str(site), str(wheel)])
    assert installed.returncode == 0, installed.stderr
    python = str(venv / "bin" / "python")
    where = _run([python, "-c", "import steepy.documents.loading as l; print(l.SCHEMA_DIR)"],
                 cwd=tmp_path)
    assert Path(where.stdout.strip()).is_relative_to(site), where.stdout + where.stderr

    work = tmp_path / "work"
    work.mkdir()
    (work / "services.yaml").write_text((ROOT / "services" / "coreutils.yaml").read_text())
    (work / "good.yaml").write_text((ROOT / "workflows" / "linear.yaml").read_text())
    (work / "bad.yaml").write_text("api: 4.7.0\nactions:\n  - type: exekute\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("STEEPY_")}
    steepy = [python, "-m", "steepy.cli"]
    good = _run([*steepy, "validate", "good.yaml", "--services", "services.yaml"], cwd=work,
                env=env)
    assert good.returncode == 0, good.stderr
    bad = _run([*steepy, "validate", "bad.yaml"], cwd=work, env=env)
    assert bad.returncode == 2 and "bad.yaml:3:" in bad.stderr, bad.stderr
    db = ["--db", f"sqlite:///{work / 'steepy.db'}"]  # a new database: migrated on first use
    submitted = _run([*steepy, "submit", "good.yaml", "--services", "services.yaml", *db],
                     cwd=work, env=env)
    assert submitted.returncode == 0, submitted.stderr
    listed = _run([*steepy, "list", *db], cwd=work, env=env)
    assert listed.returncode == 0, listed.stderr
    assert submitted.stdout.split()[-1] in listed.stdout
