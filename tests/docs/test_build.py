"""The documentation site builds strictly (`make docs`): every page of the navigation exists,
every link and anchor resolves, and the generated reference pages are in it. A broken link,
an unknown anchor, a missing page or one left out of the navigation fails the build."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.docs.reference_pages import HOOK, ROOT

pytestmark = [pytest.mark.process, pytest.mark.timeout(300)]

MKDOCS = Path(sys.executable).parent / "mkdocs"
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


def build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(MKDOCS), "build", "--strict", "--config-file", str(config),
                           "--site-dir", str(site)], capture_output=True, text=True, env=ENV,
                          cwd=config.parent, timeout=240)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("site")
    started = time.monotonic()
    result = build(ROOT / "mkdocs.yml", site)
    assert result.returncode == 0, result.stdout + result.stderr
    pages = list(site.rglob("index.html"))
    print(f"built {len(pages)} pages in {time.monotonic() - started:.1f} s")
    return site


def _text(site: Path, page: str) -> str:
    html = (site / page / "index.html").read_text(encoding="utf-8")
    return re.sub(r"<[^>]+>", "", html).replace("&lt;", "<").replace("&gt;", ">").replace(
        "&amp;", "&")


def test_the_configuration_makes_every_warning_a_failure() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    assert config["strict"] is True
    levels = config["validation"]
    assert levels["nav"] == {"omitted_files": "warn", "not_found": "warn", "absolute_links": "warn"}
    assert set(levels["links"].values()) == {"warn"}
    assert set(levels["links"]) == {"not_found", "anchors", "absolute_links", "unrecognized_links"}
    assert config["theme"]["font"] is False  # no Google Fonts: works offline


def test_every_page_of_the_navigation_is_built(site: Path) -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())

    def files(nav):
        for entry in nav:
            value = next(iter(entry.values())) if isinstance(entry, dict) else entry
            yield from (files(value) if isinstance(value, list) else [value])

    listed = list(files(config["nav"]))
    assert len(listed) >= 30
    for page in listed:
        target = "" if page == "index.md" else page.removesuffix(".md")
        assert (site / target / "index.html").is_file(), page


def test_the_generated_references_are_in_the_site(site: Path) -> None:
    from steepy.cli import main
    from steepy.config.model import LEAVES

    reference = __import__("tests.docs.reference_pages", fromlist=["load"]).load()
    for page, schema in reference.schemas().items():
        text = _text(site, f"reference/{page.removesuffix('.md')}")
        assert [k for k in schema.get("properties", {}) if k not in text] == []
        assert [k for k in reference.ref_schemas.keys_of(schema) if k not in text] == []
    config = _text(site, "reference/configuration")
    assert [k for k in LEAVES if k not in config] == []
    cli = _text(site, "reference/cli")
    assert [name for name in main.commands if f"steepy {name}" not in cli] == []
    http = _text(site, "reference/http")
    for path, item in reference.ref_http.steepy_document()["paths"].items():
        for method in item:
            assert f"{method.upper()} {path}" in http
    assert "chain.retryScheduled" in _text(site, "reference/events")


def test_a_broken_link_an_unknown_anchor_or_a_missing_page_fails_the_build(tmp_path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs, ignore=shutil.ignore_patterns("hooks", "__pycache__"))
    (docs / "broken.md").write_text(
        "# Broken\n\n[a page](nope.md), [an anchor](reference/cli.md#no-such-command), "
        "[the README](../README.md)\n")
    (docs / "orphan.md").write_text("# Not in the navigation\n")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    config.update(docs_dir=str(docs), hooks=[str(HOOK)])
    config["nav"] += [{"Broken": "broken.md"}, {"Missing": "missing.md"}]
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    result = build(tmp_path / "mkdocs.yml", tmp_path / "site")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "Aborted with" in output and "in strict mode" in output
    assert "'broken.md' contains a link 'nope.md', but the target is not found" in output
    assert "'broken.md' contains a link '../README.md'" in output
    assert "does not contain an anchor '#no-such-command'" in output
    assert "'missing.md' is included in the 'nav' configuration" in output
    assert "orphan.md" in output
