"""Every page under docs/ runs its examples (tests/docs/examples.py has the rules): its files
are written, its console commands run with bash and must print what the page shows, its
python blocks run and must exit 0, in page order, in one fresh scratch directory. HOME is
that directory, steepy's .venv/bin comes first on PATH, and no STEEPY_* or STEEP_* variable
comes in from outside.

A page with front matter `requires: [docker]` (or slurm, lmod, postgres) is marked so and gets the
component the way tests/components.py gives it (skipped when missing, a failure under
CI=true): its environment variables (DOCKER_HOST, SLURM_CONF), and for postgres a fresh empty
database whose URL is $DATABASE_URL. Pages are found when the tests are collected: a new page
needs no change here."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests import components
from tests.docs.examples import ExampleError, Run, environment, front_matter, parse_page

pytestmark = [pytest.mark.process, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
COMPONENTS = {"docker": ("docker",), "slurm": ("slurm",), "lmod": ("lmod",),
              "postgres": ("postgres", "database")}


def pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if "hooks" not in p.relative_to(DOCS).parts)


def _marks(path: Path) -> list[pytest.MarkDecorator]:
    try:
        requires = front_matter(path.read_text(encoding="utf-8")).get("requires") or []
    except (ExampleError, ValueError):
        return []  # the test itself reports it
    names = [requires] if isinstance(requires, str) else requires
    return [getattr(pytest.mark, mark) for name in names for mark in COMPONENTS.get(name, ())]


def _bin_dir() -> Path:
    venv = ROOT / ".venv" / "bin"
    return venv if (venv / "steepy").exists() else Path(sys.executable).parent


def _component_environment(request, requires: list[str], where: str) -> dict[str, str]:
    extra: dict[str, str] = {}
    for name in requires:
        if name not in COMPONENTS:
            pytest.fail(f"{where}: requires `{name}`, which is no component; one of "
                        f"{', '.join(sorted(COMPONENTS))}", pytrace=False)
        if name == "postgres":
            extra["DATABASE_URL"] = request.getfixturevalue("postgres_url")
        else:
            extra.update(components.environment(components.component(name)))
    return extra


def page_params(guides: bool) -> list:
    """The pages as test parameters: those under docs/guide/, or all others. (Two test files
    share them, so that `make test`'s two workers, which take a file each, can run them side
    by side: together they take over a minute and a half.)"""
    return [pytest.param(p, marks=_marks(p), id=str(p.relative_to(DOCS))) for p in pages()
            if (p.relative_to(DOCS).parts[0] == "guide") == guides and not _without_examples(p)]


# pages that explain no feature by example: the development notes and a generated list
WITHOUT_EXAMPLES = {"dev/components.md", "dev/docs.md", "reference/events.md"}


def _without_examples(path: Path) -> bool:
    try:
        return not parse_page(path, str(path.relative_to(ROOT))).steps
    except ExampleError:
        return False  # the page's test reports it


def test_only_the_pages_that_explain_no_feature_have_no_examples() -> None:
    """Every other page shows what it explains with examples the suite runs: a page that
    loses its last runnable example fails here rather than going untested."""
    assert {str(p.relative_to(DOCS)) for p in pages() if _without_examples(p)} == WITHOUT_EXAMPLES


@pytest.mark.parametrize("path", page_params(guides=False))
def test_page_examples(path: Path, tmp_path: Path, request) -> None:
    check_page(path, tmp_path, request)


def check_page(path: Path, tmp_path: Path, request) -> None:
    """Run the examples of the page at `path`; a failure names the block, the command, what
    was expected and what came."""
    name = str(path.relative_to(ROOT))
    try:
        page = parse_page(path, name)
    except ExampleError as e:
        page, problem = None, str(e)
    if page is None:
        pytest.fail(problem, pytrace=False)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    extra = _component_environment(request, page.requires, name)
    run = Run(page, scratch, environment(scratch, _bin_dir(), dict(os.environ), extra))
    problem = None
    try:
        run.all()
    except ExampleError as e:
        problem = str(e)
    if problem is not None:  # outside the except: no "during handling" chain in the report
        background = run.background_output()
        pytest.fail(problem + (f"\n\n{background}" if background else ""), pytrace=False)


def _run(tmp_path: Path, text: str) -> tuple[Run, str | None]:
    (tmp_path / "page.md").write_text(text)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    run = Run(parse_page(tmp_path / "page.md", "docs/page.md"), scratch,
              environment(scratch, _bin_dir(), dict(os.environ, STEEPY_DB_URL="sqlite:///x")))
    try:
        run.all()
    except ExampleError as e:
        return run, str(e)
    return run, None


def test_the_harness_runs_files_commands_scripts_and_background_commands(tmp_path: Path) -> None:
    run, problem = _run(tmp_path, (
        '```text title="data/in.txt"\nb\na\n```\n\n'
        "```console\n$ sleep 60 &\n$ sort data/in.txt\na\nb\n$ sh -c 'echo oops; exit 3'\n"
        "o...s\n[exit 3]\n$ echo \"$HOME\" && env | grep -c '^STEEPY_' \\\n  || true\n"
        f"{tmp_path / 'scratch'}\n0\n$ command -v python\n{_bin_dir()}/python\n```\n\n"
        "```python\nfrom pathlib import Path\nassert Path('data/in.txt').is_file()\n```\n"))
    assert problem is None
    (sleeper, _), = run.background
    assert sleeper.poll() is not None  # stopped at the page's end


def test_the_harness_says_where_an_example_went_wrong(tmp_path: Path) -> None:
    _, problem = _run(tmp_path, "# P\n\n```console\n$ printf 'one\\ntwo\\n'\none\nthree\n```\n")
    assert problem == ("docs/page.md:4: $ printf 'one\\ntwo\\n'\n  did not print the expected lines\n"
                       "  expected:\n     one\n  >> three   <- not found (in this order)\n"
                       "  actual output:\n   | one\n   | two")
    (tmp_path / "exit").mkdir()
    _, problem = _run(tmp_path / "exit", "```console\n$ exit 4\n```\n")
    assert problem.startswith("docs/page.md:2: $ exit 4\n  exited 4, expected 0")
    (tmp_path / "python").mkdir()
    _, problem = _run(tmp_path / "python", "```python\nassert 1 == 2, 'no'\n```\n")
    assert problem.startswith("docs/page.md:1: the python block exited 1")
    assert "AssertionError: no" in problem
