"""`plugin: NAME' in a retry policy names a `retryPolicy' plugin steepy has (extensions 1):
an unknown name is a located problem, with a did-you-mean."""

from __future__ import annotations

import textwrap

import pytest

from steepy.documents.checking import check_workflow
from steepy.documents.loading import parse_text, read_services
from steepy.documents.validation_services import Runtimes
from steepy.errors import InputError

WORKFLOW = textwrap.dedent("""\
    api: 4.7.0
    retries:
      processChains:
        plugin: on-fridays
      executables:
        plugin: on-friday
    actions:
      - type: execute
        service: sh
        retries:
          plugin: on-fridays
      - type: execute
        service: sh
        retries: {plugin: nope}
    """)

SERVICES = textwrap.dedent("""\
    - id: sh
      name: sh
      description: sh
      path: sh
      runtime: other
      retries:
        plugin: on-saturdays
      parameters: []
    """)


def test_an_unknown_plugin_is_a_located_problem(tmp_path):
    (tmp_path / "services.yaml").write_text(SERVICES)
    services = read_services(str(tmp_path / "services.yaml"))
    runtimes = Runtimes(("other",), retry_plugins=("on-fridays",))
    with pytest.raises(InputError) as caught:
        check_workflow(parse_text(WORKFLOW, "w.yaml"), services, {}, runtimes)
    said = [(p.file.rsplit("/", 1)[-1], p.line, p.column, p.path, p.message)
            for p in caught.value.problems]
    known = "the retryPolicy plugins are: `on-fridays'"
    assert said == [
        ("services.yaml", 7, 13, "[0].retries.plugin", "unknown retry policy plugin "
         f"`on-saturdays' (did you mean `on-fridays'?); {known}"),
        ("w.yaml", 4, 13, "retries.processChains.plugin", "a process chain's retry policy "
         "cannot name a plugin: a retryPolicy plugin picks the pauses between the attempts of "
         "an executable (give it in retries.executables or an action's retries)"),
        ("w.yaml", 6, 13, "retries.executables.plugin",
         f"unknown retry policy plugin `on-friday' (did you mean `on-fridays'?); {known}"),
        ("w.yaml", 14, 23, "actions[1].retries.plugin",
         f"unknown retry policy plugin `nope'; {known}")]
