"""One way to make a submission: the command line and the HTTP API read, check and build a
submission with `steepy.documents.submissions.submission_from`, so the same text is accepted
or refused the same way, with the same problems, wherever it comes from."""

from __future__ import annotations

from pathlib import Path

import pytest

from steepy.cli.common import load_registries
from steepy.documents.loading import parse_text, read_file
from steepy.documents.submissions import submission_from
from steepy.errors import InputError
from steepy.http.submit import NAME, build_submission
from tests.conftest import ROOT

RUNTIMES = ("other", "docker", "slurm")
SERVICES, MACROS = load_registries((str(ROOT / "services"),), (str(ROOT / "workflows" / "macros"),))
BAD = """api: 4.7.0
actions:
  - type: execute
    service: no-such-service
    inputs:
      - id: input_file
        var: nowhere
"""


def _problems(make) -> list[tuple]:
    try:
        make()
    except InputError as e:
        return [(p.message, p.path, p.line, p.column) for p in e.problems]
    return []


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "workflows").glob("*.yaml")))
def test_a_file_and_a_request_body_give_the_same_submission(name: str) -> None:
    text = (ROOT / "workflows" / name).read_text()
    from_file = submission_from(read_file(ROOT / "workflows" / name), SERVICES, MACROS, RUNTIMES)
    from_body = build_submission(text.encode(), SERVICES, MACROS, runtimes=RUNTIMES)
    mine, theirs = from_file.to_json(), from_body.to_json()
    assert from_file.id != from_body.id
    for document in (mine, theirs):
        document.pop("id")
    assert mine == theirs and from_file.source == text


def test_a_bad_workflow_is_refused_with_the_same_problems_everywhere(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(BAD)
    from_file = _problems(lambda: submission_from(read_file(tmp_path / "bad.yaml"), SERVICES,
                                                  MACROS, RUNTIMES))
    from_body = _problems(lambda: build_submission(BAD.encode(), SERVICES, MACROS,
                                                   runtimes=RUNTIMES))
    from_text = _problems(lambda: submission_from(parse_text(BAD, NAME), SERVICES, MACROS,
                                                  RUNTIMES))
    assert from_file and from_file == from_body == from_text
    assert any("no-such-service" in message and line == 4 for message, _, line, _ in from_file)
