"""The registry on SQLite and on PostgreSQL: atomic claims, priorities, pauses, cancel,
orphans, events."""

from __future__ import annotations

import json

import threading
from datetime import timedelta

import pytest

from steepy.model.attempt import AttemptRecord
from steepy.model import ProcessChain, Submission, Workflow
from steepy.model.submission import ProcessChainStatus as CS, SubmissionStatus as SS
from steepy.registry import ClaimFor, Registry, RunEnd, open_registry
from steepy.registry.writes import RoundWrite
from steepy.registry.records import utcnow
from tests.conftest import conformance_params
from tests.registry.chains import store_chains



@pytest.fixture
def registry(database_url: str) -> Registry:
    return open_registry(database_url)


def _submission(registry: Registry, sid: str, priority: int = 0) -> Submission:
    sub = Submission(id=sid, workflow=Workflow(name=sid, priority=priority), name=sid,
                     priority=priority)
    registry.requests.add_submission(sub)
    return sub


def _chain(cid: str, priority: int = 0, caps: list[str] = ()) -> ProcessChain:
    return ProcessChain(id=cid, priority=priority, required_capabilities=list(caps))


def test_reopen_keeps_data(database_url: str) -> None:
    url = database_url
    _submission(open_registry(url), "s1")
    assert open_registry(url).views.get_submission("s1").status == SS.ACCEPTED


def test_submissions_by_priority_then_age(registry: Registry) -> None:
    for sid, prio in (("a", 0), ("b", 5), ("c", 5), ("d", -1)):
        _submission(registry, sid, prio)
    order = [registry.leases.fetch_next_submission().id for _ in range(4)]
    assert order == ["b", "c", "a", "d"]
    assert registry.leases.fetch_next_submission() is None
    sub = registry.views.get_submission("a")
    assert sub.status == SS.RUNNING and sub.start_time is not None


def test_list_newest_first_with_total(registry: Registry) -> None:
    for i in range(5):
        _submission(registry, f"s{i}")
    page, total = registry.views.list_submissions(size=2, offset=1)
    assert total == 5 and [s.id for s in page] == ["s3", "s2"]
    assert registry.views.list_submissions(status="SUCCESS")[1] == 0


@pytest.mark.parametrize("case", conformance_params("submission-status.yaml", "scheduling_order",
                                                   id=lambda c: c["name"]))
def test_scheduling_order(registry: Registry, case: dict) -> None:
    _submission(registry, "s")
    store_chains(registry, "s", [_chain(c["id"], c["priority"], c.get("requiredCapabilities", []))
                                 for c in case["chains"]], None)
    everything = {"docker", "sleep"}
    executed = []
    while (claimed := registry.queue.claim_chain("agent", everything)) is not None:
        executed.append(claimed[0].chain.id)
        if len(executed) == 1 and case.get("added_while_first_runs"):
            store_chains(registry, "s", [_chain(c["id"], c["priority"], c.get("requiredCapabilities", []))
                                         for c in case["added_while_first_runs"]], None)
    expected = case["expected"]
    assert len(executed) == expected.get("executed_count", len(executed))
    if "first_executed" in expected:
        assert executed[0] == expected["first_executed"]
    if "second_executed" in expected:
        assert executed[1] == expected["second_executed"]
    if "executed_order" in expected:
        assert executed == expected["executed_order"]


def test_claim_needs_every_capability(registry: Registry) -> None:
    _submission(registry, "s")
    store_chains(registry, "s", [_chain("gpu", 9, ["gpu", "docker"]), _chain("plain")], None)
    record, run = registry.queue.claim_chain("a1", {"docker"})
    assert record.chain.id == "plain" and run == 1
    assert registry.queue.claim_chain("a1", {"docker"}) is None
    assert registry.queue.claim_chain("a2", {"docker", "gpu", "x"})[0].chain.id == "gpu"


def test_concurrent_claims_never_share_a_chain(database_url: str) -> None:
    url = database_url
    registry = open_registry(url)
    _submission(registry, "s")
    store_chains(registry, "s", [_chain(f"c{i}") for i in range(60)], None)
    claimed: list[str] = []
    lock = threading.Lock()

    def worker(name: str) -> None:
        own = open_registry(url)  # a separate engine, like a separate process
        while (got := own.queue.claim_chain(name)) is not None:
            with lock:
                claimed.append(got[0].chain.id)

    threads = [threading.Thread(target=worker, args=(f"a{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(claimed) == sorted(f"c{i}" for i in range(60))


def test_pause_and_resume_is_strictly_after(registry: Registry) -> None:
    _submission(registry, "s")
    store_chains(registry, "s", [_chain("c")], None)
    _, run = registry.queue.claim_chain("a")
    due = utcnow() + timedelta(seconds=10)
    registry.queue.finish_run("c", run, "ERROR", CS.PAUSED, error_message="boom", auto_resume_after=due)
    assert registry.views.get_chain("c").status == CS.PAUSED
    assert registry.queue.resume_due_chains(due) == []  # equal to now is not yet due
    assert registry.queue.resume_due_chains(due - timedelta(seconds=20)) == []
    assert registry.queue.resume_due_chains(due + timedelta(milliseconds=1)) == ["c"]
    record, run2 = registry.queue.claim_chain("a")
    assert run2 == 2 and [r.status for r in registry.views.runs("c")] == ["ERROR", None]
    assert registry.views.runs("c")[0].auto_resume_after == due


def test_finish_stores_results_and_attempts(registry: Registry) -> None:
    _submission(registry, "s")
    store_chains(registry, "s", [_chain("c")], {"state": 1})
    _, run = registry.queue.claim_chain("a")
    registry.queue.finish_run("c", run, "SUCCESS", CS.SUCCESS, results={"out": ["/o/1"]},
                        attempts=[AttemptRecord("e", "cp", 1, utcnow(), utcnow(), "SUCCESS", 0,
                                                last_lines=["done"])])
    assert registry.views.get_chain("c").results == {"out": ["/o/1"]}
    (attempt,) = registry.views.attempts("c")
    assert attempt["lastLines"] == ["done"] and attempt["serviceId"] == "cp"
    assert registry.submissions.saved_state("s") == ({"state": 1}, 0)
    assert registry.views.chain_counts("s") == {"SUCCESS": 1}


def test_cancel_waiting_and_report_running(registry: Registry) -> None:
    _submission(registry, "s")
    store_chains(registry, "s", [_chain("r", 5), _chain("w"), _chain("p")], None)
    registry.queue.claim_chain("a")  # r is RUNNING
    registry.queue.claim_chain("a")
    registry.queue.finish_run("w", 1, "ERROR", CS.PAUSED, auto_resume_after=utcnow())
    assert registry.submissions.cancel_chains("s") == ["r"]
    assert registry.views.chain_counts("s") == {"RUNNING": 1, "CANCELLED": 2}
    assert registry.submissions.cancel_requested("s")


def test_orphans_of_lost_agents_are_registered_again(registry: Registry) -> None:
    _submission(registry, "s")
    store_chains(registry, "s", [_chain("x"), _chain("y")], None)
    registry.queue.claim_chain("dead")
    registry.queue.claim_chain("alive")
    assert registry.leases.release_orphans({"alive"}) == ["x"]
    assert registry.views.get_chain("x").status == CS.REGISTERED
    assert registry.views.runs("x")[0].status == "AGENT_LOST"
    assert registry.queue.claim_chain("alive")[1] == 2  # the next run of x


def test_a_chain_registered_again_shows_no_run(registry: Registry) -> None:
    """Steep's rule: a chain that waits again after a run has no current run (issue 28)."""
    _submission(registry, "s")
    store_chains(registry, "s", [_chain("x")], None)
    registry.queue.claim_chain("dead")
    assert registry.leases.release_orphans(set()) == ["x"]
    run_fields = {"agentId", "startTime", "endTime", "errorMessage", "runNumber",
                  "autoResumeAfter"}
    one = registry.views.chain("x")
    assert one["status"] == CS.REGISTERED and not run_fields & set(one)
    assert one["totalRuns"] == 1
    (listed,), _ = registry.views.chain_summaries("s")
    assert listed["status"] == CS.REGISTERED and not run_fields & set(listed)
    first = registry.views.chain("x", 1)  # the run itself, asked for by its number
    assert first["status"] == "AGENT_LOST" and first["agentId"] == "dead"
    assert first["runNumber"] == 1 and first["startTime"] and first["endTime"]


def test_timeline_records_every_change(registry: Registry) -> None:
    _submission(registry, "s")
    registry.leases.fetch_next_submission()
    store_chains(registry, "s", [_chain("c")], None)
    registry.queue.claim_chain("a")
    registry.queue.finish_run("c", 1, "SUCCESS", CS.SUCCESS)
    registry.submissions.finish_submission("s", SS.SUCCESS)
    kinds = [e["kind"] for e in registry.views.events("s")]
    assert kinds == ["submission.status", "submission.status", "chain.registered",
                     "chain.started", "chain.finished", "submission.status"]
    last = registry.views.events("s")[-1]
    assert last["status"] == "SUCCESS" and registry.views.events("s", after=last["id"]) == []


def test_finishing_claims_the_agents_next_chain_at_once(registry: Registry) -> None:
    _submission(registry, "s")
    store_chains(registry, "s", [_chain("a"), _chain("b", caps=["gpu"]), _chain("c")], None)
    _, run = registry.queue.claim_chain("agent")
    following, = registry.queue.record([RunEnd("a", run, "SUCCESS", CS.SUCCESS)], [ClaimFor("agent")])
    assert following is not None and following[0].chain.id == "c" and following[1] == 1
    assert following[0].status == CS.RUNNING
    assert registry.views.chain_counts("s") == {"SUCCESS": 1, "RUNNING": 1, "REGISTERED": 1}
    assert [r.agent_id for r in registry.views.runs("c")] == ["agent"]
    # nothing this agent can run: the run is closed all the same
    assert registry.queue.record([RunEnd("c", 1, "SUCCESS", CS.SUCCESS)], [ClaimFor("agent")]) == [None]
    assert registry.views.chain_counts("s") == {"SUCCESS": 2, "REGISTERED": 1}


def _closed(cursor) -> bool:
    if hasattr(cursor, "closed"):  # (psycopg's)
        return cursor.closed
    try:  # (sqlite3's says so when used)
        cursor.fetchone()
    except Exception as e:  # noqa: BLE001
        return "closed" in str(e)
    return False


def test_a_failing_end_and_claim_store_nothing_and_leave_no_cursor_open(
        registry: Registry, monkeypatch) -> None:
    """The scheduler's transaction (attempts, an end, a claim) goes in one batch: an attempt
    the database refuses (its chain is gone) rolls all of it back, and the cursors the
    transaction opened are closed (also the one that reads which runs are open)."""
    from steepy.registry.hotpath import HotPath
    from steepy.registry.writes import AttemptWrite

    _submission(registry, "s")
    store_chains(registry, "s", [_chain("a"), _chain("c")], None)
    _, run = registry.queue.claim_chain("agent")
    opened: list = []
    cursor = HotPath.cursor
    monkeypatch.setattr(HotPath, "cursor", staticmethod(
        lambda conn: opened.append(cursor(conn)) or opened[-1]))
    record = AttemptRecord("e", "svc", 1, utcnow(), utcnow(), outcome="SUCCESS")
    with pytest.raises(Exception) as raised:
        registry.queue.record([RunEnd("a", run, "SUCCESS", CS.SUCCESS, submission_id="s")],
                              [ClaimFor("agent")], [AttemptWrite.of("gone", 1, record)])
    assert "foreign key" in str(raised.value).lower()
    # (how many were opened depends on when the server's answer arrives: at the batch's end
    # or at a later statement of it; SQLite's comes at once)
    assert opened and all(_closed(c) for c in opened)
    assert registry.views.chain_counts("s") == {"RUNNING": 1, "REGISTERED": 1}
    assert [r.end_time for r in registry.views.runs("a")] == [None]


def test_outcomes_fed_after_the_stored_state_are_fed_again_on_resume(registry: Registry) -> None:
    _submission(registry, "s")
    rounds = registry.submissions
    rounds.controller_round("s", RoundWrite(1, chains=[_chain("a"), _chain("b"), _chain("c")],
                                            save_state=True, state={"state": 1}))
    for cid in ("a", "b", "c"):
        _, run = registry.queue.claim_chain("agent")
        registry.queue.finish_run(cid, run, "SUCCESS", CS.SUCCESS)
    rounds.controller_round("s", RoundWrite(2, fed=["a"], save_state=True, state={"state": 2}))
    # fed, but the state of round 3 was never stored
    unfed = rounds.controller_round("s", RoundWrite(3, fed=["b"])).finished
    assert rounds.saved_state("s") == ({"state": 2}, 2)
    assert [r.chain.id for r in unfed] == ["c"]
    assert [r.chain.id for r in rounds.controller_round("s").finished] == ["c"]
    resumed = rounds.controller_round("s", after_round=2).finished
    assert [r.chain.id for r in resumed] == ["b", "c"]


def test_submission_document_matches_each_chain_document(registry: Registry) -> None:
    from steepy.registry.documents import chain_document, submission_document

    _submission(registry, "s")
    store_chains(registry, "s", [_chain("a"), _chain("b")], None)
    for cid in ("a", "b"):
        _, run = registry.queue.claim_chain("agent")
        registry.queue.finish_run(cid, run, "ERROR", CS.PAUSED, auto_resume_after=utcnow(),
                            attempts=[AttemptRecord("e", "cp", n, utcnow(), utcnow(), "FAILED", 1)
                                      for n in (1, 2)])
    registry.queue.resume_due_chains(utcnow() + timedelta(seconds=1))
    _, run = registry.queue.claim_chain("agent")
    document = submission_document(registry.views, "s")
    assert [c["id"] for c in document["processChains"]] == ["a", "b"]
    assert document["processChains"] == [chain_document(registry.views, registry.views.get_chain(c))
                                         for c in ("a", "b")]
    assert [len(r["attempts"]) for r in document["processChains"][0]["runs"]] == [2, 0]


@pytest.mark.parametrize("chains, page", [(0, 2), (1, 2), (5, 2), (5, 100)])
def test_the_streamed_document_is_the_whole_document(registry: Registry, chains: int,
                                                     page: int) -> None:
    # `steepy run --json' writes a page of chains at a time (100,000 chains, bounded memory)
    from steepy.registry.documents import submission_document, write_submission_document

    _submission(registry, "s")
    ids = [f"c{i}" for i in range(chains)]
    store_chains(registry, "s", [_chain(c) for c in ids], None)
    for n, cid in enumerate(ids[:3]):
        _, run = registry.queue.claim_chain("agent")
        registry.queue.finish_run(cid, run, "SUCCESS", CS.SUCCESS, attempts=[AttemptRecord(
            "e", "cp", 1, utcnow(), utcnow(), "SUCCESS", 0)], results={"o": [f"/out/{n}"]})
    pieces: list[str] = []
    write_submission_document(registry.views, "s", pieces.append, page=page)
    whole = submission_document(registry.views, "s")
    text = "".join(pieces)
    assert json.loads(text) == whole
    assert len(whole["processChains"]) == chains and len(pieces) > (chains > page)
    # the submission's own fields indented, then its chains a line each
    lines = text.splitlines()
    assert lines[:2] == ["{", '  "id": "s",']
    chain_lines = [line for line in lines if line.startswith('    {"id": ')]
    assert len(chain_lines) == chains
    assert [json.loads(line.strip().rstrip(","))["id"] for line in chain_lines] == ids


def test_chains_are_paged_by_position_not_by_count_and_offset(registry: Registry) -> None:
    # `steepy run --json' of a million chains: the last page costs what the first did
    _submission(registry, "s")
    _submission(registry, "t")
    store_chains(registry, "s", [_chain("a"), _chain("b")], None)
    store_chains(registry, "t", [_chain("x")], None)
    store_chains(registry, "s", [_chain("c")], None)
    first = registry.views.chains_after("s", 0, 2)
    assert [c.chain.id for c in first] == ["a", "b"]
    rest = registry.views.chains_after("s", first[-1].seq, 2)
    assert [c.chain.id for c in rest] == ["c"]
    assert registry.views.chains_after("s", rest[-1].seq, 2) == []


def test_a_changed_priority_decides_which_accepted_submission_starts_next(registry: Registry) -> None:

    for sid, prio in (("a", 5), ("b", 0)):
        _submission(registry, sid, prio)
    registry.requests.set_submission_priority("b", 9)
    assert [registry.leases.fetch_next_submission().id for _ in range(2)] == ["b", "a"]


def test_an_attempt_has_one_shape(registry: Registry) -> None:
    """What the agent records is what the registry gives back (timeoutKind, lastLines, ...)."""
    _submission(registry, "s")
    store_chains(registry, "s", [_chain("c")], None)
    _, run = registry.queue.claim_chain("a")
    record = AttemptRecord("e", "cp", 1, utcnow(), utcnow(), "TIMEOUT", None, 15,
                           "maximum inactivity", 250, "fixed 250 ms", ["a", "b"], "timed out")
    registry.queue.finish_run("c", run, "ERROR", CS.ERROR, attempts=[record])
    assert registry.views.attempts("c") == [{"runNumber": run, **record.to_json()}]
    assert record.to_json()["timeoutKind"] == "maximum inactivity"


def test_cancel_and_requeue_events_say_the_status(registry: Registry) -> None:
    _submission(registry, "s")
    store_chains(registry, "s", [_chain("waiting"), _chain("running")], None)
    _, run = registry.queue.claim_chain("a", only="s")
    running = registry.views.list_chains("s", status="RUNNING")[0][0].chain.id
    waiting = ({"waiting", "running"} - {running}).pop()
    registry.requests.cancel_chain(waiting)
    registry.requests.cancel_chain(running)
    registry.queue.requeue_run(running, run, "engine stopped")
    events = [e for e in registry.views.events("s")
              if e["kind"] in ("chain.cancelRequested", "chain.requeued")]
    assert [(e["kind"], e.get("previous"), e["status"]) for e in events] == [
        ("chain.cancelRequested", "REGISTERED", "CANCELLED"),
        ("chain.cancelRequested", "RUNNING", "RUNNING"),
        ("chain.requeued", None, "CANCELLED")]


def test_one_transaction_records_several_ends_and_claims(registry: Registry) -> None:
    """Group commit: the ends and claims of several agents at once; each claim gets a chain
    of its own that its capabilities allow, in the order of priority and age."""
    _submission(registry, "s")
    store_chains(registry, "s", [_chain("gpu", 9, ["gpu"]), _chain("p1", 1),
                                 _chain("p0a"), _chain("p0b")], None)
    first = registry.queue.record([], [ClaimFor("a"), ClaimFor("b", frozenset({"gpu"}))])
    assert [(c[0].chain.id, c[1]) for c in first] == [("p1", 1), ("gpu", 1)]
    ends = [RunEnd(record.chain.id, run, "SUCCESS", CS.SUCCESS, results={"o": [record.chain.id]})
            for record, run in first]
    second = registry.queue.record(ends, [ClaimFor("a"), ClaimFor("b"), ClaimFor("c")])
    assert [c[0].chain.id if c else None for c in second] == ["p0a", "p0b", None]
    assert registry.views.get_chain("p1").results == {"o": ["p1"]}
    assert {c.chain.id: c.status for c in registry.views.list_chains("s")[0]} == {
        "gpu": CS.SUCCESS, "p1": CS.SUCCESS, "p0a": CS.RUNNING, "p0b": CS.RUNNING}
    assert [r.agent_id for r in registry.views.runs("p0b")] == ["b"]
    kinds = [e["kind"] for e in registry.views.events("s")]
    assert kinds.count("chain.started") == 4 and kinds.count("chain.finished") == 2


def test_an_agent_that_came_alive_after_the_look_keeps_its_chain(registry: Registry) -> None:
    """An engine looks at the live agents, then (seconds later, after waiting for a dead
    engine's processes) releases the runs of the others: an agent that started and claimed
    a chain in between is alive by then, and its chain is not released (it would run
    twice)."""
    _submission(registry, "s")
    store_chains(registry, "s", [_chain("x"), _chain("y")], None)
    registry.queue.claim_chain("dead")
    looked = [a["id"] for a in registry.leases.live_agents(10)]  # neither agent is alive yet
    registry.leases.heartbeat("new", [{"id": "newcomer", "capabilities": []}], 10)
    registry.queue.claim_chain("newcomer")
    assert registry.leases.release_orphans(looked, 10) == ["x"]
    assert registry.views.get_chain("y").status == CS.RUNNING


def test_a_retry_runs_a_chain_cancelled_on_its_own_and_a_finished_chain_is_no_cancel(
        registry: Registry) -> None:
    """`steepy cancel CHAIN' then `steepy retry' of its submission: the chain kept its cancel
    request and was cancelled again at once, on every retry; a finished chain took a cancel
    (exit 0, an event after the submission's end); a submission cancelled while ACCEPTED and
    retried ran without a start time (a review of the management commands)."""
    _submission(registry, "s")
    store_chains(registry, "s", [_chain("c"), _chain("done")], None)
    _, run = registry.queue.claim_chain("a", only="s")
    running = registry.views.list_chains("s", status="RUNNING")[0][0].chain.id
    other = ({"c", "done"} - {running}).pop()
    assert registry.requests.cancel_chain(running) == CS.RUNNING
    registry.queue.finish_run(running, run, "CANCELLED", CS.CANCELLED)
    _, run2 = registry.queue.claim_chain("a", only="s")
    registry.queue.finish_run(other, run2, "SUCCESS", CS.SUCCESS, results={})
    events = len(registry.views.events("s"))
    assert registry.requests.cancel_chain(other) == CS.SUCCESS  # finished: nothing changes
    assert len(registry.views.events("s")) == events
    assert registry.views.get_chain(other).status == CS.SUCCESS
    with registry.db.write() as conn:  # (what the controller ends it with)
        conn.exec_driver_sql("UPDATE submissions SET status = 'CANCELLED' WHERE id = 's'")
    assert registry.requests.retry_submission("s") == SS.CANCELLED
    again = registry.views.get_chain(running)
    assert again.status == CS.REGISTERED
    claimed = registry.queue.claim_chain("a", only="s")
    assert claimed is not None and claimed[0].chain.id == running
    with registry.db.read() as conn:  # no cancel waiting for it (its agent would obey)
        assert not conn.exec_driver_sql(
            f"SELECT cancel_requested FROM process_chains WHERE id = '{running}'").scalar()


def test_a_submission_cancelled_while_accepted_gets_a_start_time_when_retried(
        registry: Registry) -> None:
    _submission(registry, "s")
    registry.requests.cancel_submission("s")
    assert registry.views.get_submission("s").start_time is None
    assert registry.requests.retry_submission("s") == SS.CANCELLED
    assert registry.views.get_submission("s").start_time is not None
