"""The project's container examples run offline on what `.ci/docker' provides: every image
named in services/ and workflows/ (a docker service's `path', or a mention such as
`busybox:1.35' in a comment) is the image `.ci/docker start' makes. Reads files only."""

from __future__ import annotations

import re

from steepy.documents.loading import read_services
from tests.conftest import ROOT

MENTION = re.compile(r"\b(?:[\w.-]+/)*busybox:[\w.-]*\w")  # `busybox:1.35', `lib/busybox:x'


def ci_image() -> str:
    """The image `.ci/docker' makes (its IMAGE=...)."""
    [image] = re.findall(r"^IMAGE=(\S+)$", (ROOT / ".ci" / "docker").read_text(), re.M)
    return image


def test_every_docker_service_runs_the_image_ci_provides() -> None:
    services = read_services(str(ROOT / "services"))
    images = {sid: s.path for sid, s in services.items() if s.runtime == "docker"}
    assert images, "no docker service left to check"
    assert images == dict.fromkeys(images, ci_image())


def test_every_image_mentioned_in_workflows_and_services_is_that_image() -> None:
    mentioned = {(path.relative_to(ROOT).as_posix(), found)
                 for folder in ("workflows", "services")
                 for path in sorted((ROOT / folder).rglob("*.yaml"))
                 for found in MENTION.findall(path.read_text())}
    assert ("workflows/docker.yaml", ci_image()) in mentioned
    assert {image for _, image in mentioned} == {ci_image()}, sorted(mentioned)
