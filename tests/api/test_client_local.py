"""The client over a local database, without an engine: what is stored, refused and said
(steepy.connect with a path or URL; nothing here starts a process)."""

from __future__ import annotations

import pytest

import steepy
from steepy.api.workflow import workflow_document
from tests.api.conftest import WORKFLOW


@pytest.fixture
def client(scratch):
    with steepy.connect(scratch / "db.sqlite", services="services.yaml") as opened:
        yield opened


def test_a_workflow_as_a_path_text_or_dict_with_vars(client, scratch) -> None:
    import yaml

    by_path = client.submit("greet.yaml")
    by_text = client.submit(WORKFLOW, vars={"who": "text"})
    by_dict = client.submit(yaml.safe_load(WORKFLOW), vars={"who": "dict"})
    assert isinstance(by_path, steepy.Submission) and by_path.status == "ACCEPTED"
    assert by_path.name == "greet" and by_path.results == {} and by_path.finished is False
    assert [s.id for s in client.submissions()] == [by_dict.id, by_text.id, by_path.id]
    assert [s.id for s in client.submissions(status="ACCEPTED")][-1] == by_path.id
    assert client.submissions("SUCCESS") == []
    workflows = [client.backend.registry.views.get_submission(s.id).workflow
                 for s in (by_path, by_text, by_dict)]
    values = [{v.id: v.value for v in w.vars}["who"] for w in workflows]
    assert values == ["world", "text", "dict"]
    assert (scratch / "db.sqlite").exists()


def test_bad_input_is_an_input_error_located_and_nothing_is_stored(client, scratch) -> None:
    (scratch / "bad.yaml").write_text(WORKFLOW.replace("service: sh", "service: nope"))
    with pytest.raises(steepy.InputError) as bad:
        client.submit("bad.yaml")
    assert str(bad.value).startswith("bad.yaml:11:14: actions[0].service: ")
    with pytest.raises(steepy.InputError) as unknown:
        client.submit("greet.yaml", vars={"whom": "x", "who": "y"})
    [problem] = unknown.value.problems
    assert (problem.file, problem.line, problem.path) == ("<vars>", None, "whom")
    assert problem.message == "the workflow has no variable `whom' that can be set; did you mean `who'?"
    with pytest.raises(steepy.InputError) as missing:
        client.submit("no/such.yaml")
    assert str(missing.value).startswith("no/such.yaml: cannot read file")
    with pytest.raises(steepy.InputError, match=r"^<workflow>:3:14: actions: expected array"):
        client.submit({"api": "4.7.0", "actions": 1})
    assert not (scratch / "db.sqlite").exists()  # nothing stored: not even a database


def test_vars_are_kept_beside_the_source_as_written(client) -> None:
    submission = client.submit(WORKFLOW, vars={"who": 3})
    stored = client.backend.registry.views.get_submission(submission.id)
    assert {v.id: v.value for v in stored.workflow.vars}["who"] == 3
    assert stored.source == WORKFLOW and stored.vars == {"who": 3}
    assert submission.vars == {"who": 3} and client.submit(WORKFLOW).vars == {}
    assert workflow_document(WORKFLOW).text == WORKFLOW
    [listed] = [s for s in client.submissions() if s.id == submission.id]
    assert listed.refresh().vars == {"who": 3}  # (review, session 49: a listing's stayed {})


def test_unknown_ids_are_not_found(client, scratch) -> None:
    with pytest.raises(steepy.NotFound, match="No database at"):
        client.submission("nope")  # reading makes no database
    assert not (scratch / "db.sqlite").exists()
    client.submit("greet.yaml")
    with pytest.raises(steepy.NotFound, match="No submission with the id `nope'"):
        client.submission("nope")
    with pytest.raises(steepy.NotFound, match="No process chain with the id `nope'"):
        client.chain("nope")
    with pytest.raises(LookupError):  # NotFound is one
        client.chain("nope")


def test_cancel_retry_and_their_refusals(client) -> None:
    submission = client.submit("greet.yaml")
    assert submission.cancel() == "ACCEPTED"
    assert submission.status == "CANCELLED" and submission.finished
    with pytest.raises(steepy.Refused) as refused:
        submission.cancel()
    assert refused.value.status == "CANCELLED" and "already finished" in str(refused.value)
    assert submission.retry() == "CANCELLED" and submission.status == "RUNNING"
    other = client.submit("greet.yaml")
    with pytest.raises(steepy.Refused, match="only ERROR, PARTIAL_SUCCESS and CANCELLED"):
        other.retry()
    assert other.refresh().status == "ACCEPTED"  # unchanged


def test_wait_gives_up_after_its_timeout(client) -> None:
    submission = client.submit("greet.yaml")  # no engine runs it
    with pytest.raises(steepy.WaitTimeout) as late:
        submission.wait(timeout=0.1)
    assert late.value.status == "ACCEPTED" and isinstance(late.value, TimeoutError)
    submission.cancel()
    assert submission.wait(timeout=0.1) == "CANCELLED"


def test_events_so_far_and_live_until_finished(client) -> None:
    submission = client.submit("greet.yaml")
    [accepted] = submission.events(follow=False)
    assert isinstance(accepted, steepy.Event)
    assert (accepted.kind, accepted.status, accepted.chain_id) == (
        "submission.status", "ACCEPTED", None)
    submission.cancel()
    kinds = [(e.kind, e.status) for e in submission.events()]  # ends: it has finished
    assert kinds[0] == ("submission.status", "ACCEPTED")
    assert kinds[-1] == ("submission.status", "CANCELLED")
    assert list(submission.events(after=accepted.id, follow=False))[0].id > accepted.id


def test_services_are_those_workflows_are_checked_against(client) -> None:
    from steepy.model.service import Service

    [service] = client.services()
    assert isinstance(service, Service) and service.id == "sh"
    assert [p.id for p in service.parameters] == ["script", "zero", "arg", "out"]


def test_a_database_url_or_path_and_the_configured_services(scratch) -> None:
    url = f"sqlite:///{scratch / 'other.db'}"
    with steepy.connect(url, services="services.yaml") as client:
        submitted = client.submit("greet.yaml")
    with steepy.connect(str(scratch / "other.db")) as again:
        assert again.submission(submitted.id).status == "ACCEPTED"
    with pytest.raises(steepy.InputError, match="^missing.yaml: cannot read file"):
        with steepy.connect(url, services="missing.yaml") as client:
            client.submit("greet.yaml")
    (scratch / "steepy.yaml").write_text("services: services.yaml\n")
    with steepy.connect(url) as configured:
        assert [s.id for s in configured.services()] == ["sh"]


def test_steeps_jdbc_url_is_refused_with_the_url_to_write(scratch) -> None:
    with pytest.raises(steepy.InputError, match=(
            r"^target: `jdbc:postgresql://h:5432/db' is Steep's JDBC form; steepy takes an "
            r"SQLAlchemy URL: postgresql\+psycopg://USER:PASSWORD@h:5432/db ")):
        steepy.connect("jdbc:postgresql://h:5432/db")
    with pytest.raises(steepy.InputError, match="^target: unsupported database `mysql'"):
        steepy.connect("mysql://h/db")


def test_polling_has_one_pace() -> None:
    """How often the API looks at a database is said in one place."""
    import ast

    from tests.conftest import ROOT

    homes = [path.name for path in sorted((ROOT / "steepy" / "api").glob("*.py"))
             for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Assign)
             and any(getattr(t, "id", None) == "POLL_S" for t in node.targets)]
    assert homes == ["submission.py"]

