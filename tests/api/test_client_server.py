"""The client over a real `steepy serve` (steepy.connect("http://...")): the same methods as
over a database, with the server's engine running the work."""

from __future__ import annotations

import time

import pytest

import steepy
from tests.api.conftest import SERVICES, WORKFLOW
from tests.http.conftest import Server

pytestmark = pytest.mark.process

SLEEPY = 'echo "start $1"; sleep 30'


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    directory = tmp_path_factory.mktemp("api-server")
    (directory / "services.yaml").write_text(SERVICES)
    running = Server(directory, "--agents", "2", "-s", str(directory / "services.yaml"),
                     token="secret")
    yield running
    assert running.stop() == 0


@pytest.fixture
def client(server, scratch):
    with steepy.connect(server.url, token="secret") as opened:
        yield opened


def test_submit_wait_results_logs_and_events(client) -> None:
    submission = client.submit("greet.yaml", vars={"who": "server"})
    assert submission.wait(timeout=30) == "SUCCESS"
    [path] = submission.results["greeting"]
    assert path.endswith(".txt")
    [chain] = submission.chains()
    assert chain.logs() == "hello server\n" and chain.attempts[0].exit_code == 0
    assert client.chain(chain.id).status == "SUCCESS"
    events = list(submission.events())  # the server's stream, which ends
    assert [e.status for e in events if e.kind == "submission.status"][-1] == "SUCCESS"
    assert [e.id for e in events] == [e.id for e in submission.events(follow=False)]
    assert submission.id in [s.id for s in client.submissions("SUCCESS")]
    assert [s.id for s in client.services()] == ["sh"]


def test_events_are_live_and_cancel_stops_the_work(client) -> None:
    submission = client.submit(WORKFLOW, vars={"script": SLEEPY})
    events = submission.events()
    for event in events:
        if event.kind == "chain.started":
            break
    _wait_for_output(submission)
    assert submission.cancel() == "RUNNING"
    rest = [(e.kind, e.status) for e in events]  # goes on where it was, and ends
    assert rest[-1] == ("submission.status", "CANCELLED")
    assert submission.wait(timeout=1) == "CANCELLED"
    with pytest.raises(steepy.Refused):
        submission.cancel()
    [chain] = submission.chains()
    assert chain.status == "CANCELLED" and chain.logs() == "start world\n"


def _wait_for_output(submission, timeout_s: float = 30) -> None:
    """Until the tool has written its first line: `chain.started' comes when its process
    was started, which may be before the tool's `echo' ran (a cancel then finds no output)."""
    end = time.monotonic() + timeout_s
    [chain] = submission.chains()
    while chain.logs() != "start world\n":
        assert time.monotonic() < end, "the tool wrote nothing in 30 s"
        time.sleep(0.05)


def test_a_running_chain_is_cancelled_alone_and_a_finished_one_refused(client) -> None:
    submission = client.submit(WORKFLOW, vars={"script": SLEEPY})
    for event in submission.events():
        if event.kind == "chain.started":
            break
    [chain] = submission.chains()
    assert chain.cancel() == "RUNNING"  # the status it had
    assert submission.wait(timeout=30) == "CANCELLED"
    assert chain.refresh().status == "CANCELLED"
    with pytest.raises(steepy.Refused, match="has already finished"):
        chain.cancel()


def test_a_failure_and_a_retry(client) -> None:
    failed = client.submit("greet.yaml", vars={"script": "echo no; exit 2"})
    assert failed.wait(timeout=30) == "ERROR"
    assert failed.chains()[0].attempts[-1].exit_code == 2
    assert failed.retry() == "ERROR"
    assert failed.wait(timeout=30) == "ERROR"
    assert [r.number for r in failed.chains()[0].runs] == [1, 2]


def test_errors_over_http(client, server, scratch) -> None:
    (scratch / "bad.yaml").write_text(WORKFLOW.replace("service: sh", "service: nope"))
    with pytest.raises(steepy.InputError) as bad:  # the server's problems, in the file
        client.submit("bad.yaml")
    assert str(bad.value).startswith("bad.yaml:11:14: actions[0].service: ")
    with pytest.raises(steepy.InputError) as by_path:  # a dict: placed by JSON path
        client.submit({"api": "4.7.0", "actions": [{"type": "execute", "service": "nope"}]})
    assert by_path.value.problems[0].path == "actions[0].service"
    with pytest.raises(steepy.NotFound, match="No submission with the id `nope'"):
        client.submission("nope")
    with pytest.raises(steepy.NotFound):
        client.chain("nope")
    with steepy.connect(server.url, token="wrong") as stranger:
        with pytest.raises(steepy.ClientError, match="wants a token"):
            stranger.submissions()
