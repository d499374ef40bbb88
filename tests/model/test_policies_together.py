"""The retry and timeout policies of one service or action are read together: the problems of
all of them come out at once, not only those of the first bad one (issue 26, defect 1)."""

from __future__ import annotations

import pytest

from steepy.errors import InputError
from steepy.model import Service, Workflow

SERVICE = {"id": "s", "name": "s", "description": "d", "path": "true", "runtime": "other",
           "parameters": [], "retries": {"delay": "5 parsecs"}, "maxInactivity": "1 eon",
           "maxRuntime": 1000, "deadline": {"timeout": "soon"}}


def test_every_bad_policy_of_a_service_is_reported() -> None:
    with pytest.raises(InputError) as caught:
        Service.from_json(SERVICE)
    assert [p.path for p in caught.value.problems] == ["retries.delay", "maxInactivity",
                                                       "deadline.timeout"]


def test_every_bad_policy_of_an_action_is_reported_with_its_path() -> None:
    action = {"type": "execute", "service": "s", "maxRuntime": "3 fortnights",
              "retries": {"maxAttempts": 2, "delay": "later"}}
    with pytest.raises(InputError) as caught:
        Workflow.from_json({"api": "4.7.0", "actions": [action]})
    assert [p.path for p in caught.value.problems] == ["actions[0].retries.delay",
                                                       "actions[0].maxRuntime"]
