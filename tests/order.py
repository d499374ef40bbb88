"""The order in which `make test`'s workers take the test files: longest first.

pytest-xdist's `--dist loadfile` hands each worker whole files, in the order they were
collected (with `--no-loadscope-reorder`; by default it puts files with many tests first,
so that files of one or two long tests, such as a server's or a kill -9's, came last and a
worker ran three of them back to back after the others had finished: 10-20 s of the wall
time, replayed from a full run's junit file). The seconds each file took are in
durations.json; a file not in it (a new one) goes first, as if it were long.

Update the table from a full run: `.venv/bin/python -m pytest -n 4 --dist loadfile
--junitxml=/tmp/j.xml` then `.venv/bin/python -m tests.order /tmp/j.xml`.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from xml.etree import ElementTree

TABLE = Path(__file__).with_name("durations.json")


def file_seconds() -> dict[str, float]:
    try:
        return json.loads(TABLE.read_text())
    except (OSError, ValueError):
        return {}


def longest_first(items: list, root: Path) -> None:
    """Sort collected test items by their file's seconds, longest first (stable: a file's
    tests keep their order)."""
    seconds = file_seconds()
    unknown = max(seconds.values(), default=0.0)

    def key(item) -> float:
        name = Path(str(item.path)).relative_to(root).as_posix()
        return -seconds.get(name, unknown)

    items.sort(key=key)


class LongestFirst:
    """The plugin that sorts them (registered by tests/conftest.py, whose own
    `pytest_collection_modifyitems' is the fast floor's)."""

    def __init__(self, root: Path):
        self.root = root

    def pytest_collection_modifyitems(self, items: list) -> None:
        longest_first(items, self.root)


def _from_junit(path: str) -> dict[str, float]:
    totals: dict[str, float] = defaultdict(float)
    for case in ElementTree.parse(path).iter("testcase"):
        module = case.get("classname", "").split(".")
        # (the class of a test class is the last part; the file is what exists)
        for cut in range(len(module), 0, -1):
            name = "/".join(module[:cut]) + ".py"
            if Path(name).exists():
                totals[name] += float(case.get("time", 0))
                break
    return {name: round(total, 1) for name, total in sorted(totals.items())}


if __name__ == "__main__":
    TABLE.write_text(json.dumps(_from_junit(sys.argv[1]), indent=1) + "\n")
