"""The examples of the guides (docs/guide/), run as test_examples.py runs every other page's;
a file of their own so that another test worker can take them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.test_examples import check_page, page_params

pytestmark = [pytest.mark.process, pytest.mark.timeout(900)]


@pytest.mark.parametrize("path", page_params(guides=True))
def test_guide_examples(path: Path, tmp_path: Path, request) -> None:
    check_page(path, tmp_path, request)
