"""The garbage collector on SQLite and PostgreSQL: submissions that finished before the
retention go with everything stored of them (chains, runs, attempts, events, log chunks),
their log files and temporary outputs; results under outPath only when retention.results
says so; newer and unfinished submissions stay; a dry run deletes nothing. Engines run it on
its cron, `steepy gc' once."""

from __future__ import annotations

import asyncio
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select, update

from steepy.agent import AgentConfig
from steepy.engine.engine import Engine, EngineSettings
from steepy.engine.housekeeping import GcSettings, collect_garbage
from steepy.model.ids import unique_id
from steepy.documents.loading import parse_workflow, read_services
from steepy.model import Submission
from steepy.model.common import utcnow
from steepy.registry import Registry, open_registry
from steepy.registry.tables import (attempts, events, log_chunks, process_chains, runs,
                                    submissions)
from tests.conftest import ROOT
from tests.schedules.processes import env, steepy

pytestmark = [pytest.mark.process]

SERVICES = read_services(str(ROOT / "services"))
LINEAR = """
api: 4.7.0
name: talkative
actions:
  - id: talk
    type: execute
    service: slowprint
    inputs: [{id: lines, value: 2}, {id: interval, value: 0}]
    outputs: [{id: output_file, var: said}]
  - id: keep
    type: execute
    service: cat
    inputs: [{id: input_files, var: said}]
    outputs: [{id: output_file, var: kept, store: true}]
"""


@pytest.fixture(autouse=True)
def in_project(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)  # the example names its input relative to the project


def _settings(tmp_path: Path, gc: GcSettings | None = None) -> EngineSettings:
    return EngineSettings(tmp_path=str(tmp_path / "tmp"), out_path=str(tmp_path / "out"),
                          agents=1, sweep_s=0.5, heartbeat_s=0.5, lease_s=3,
                          logs_in_database=True, gc=gc,
                          agent=AgentConfig(kill_grace_period_ms=1000, log_dir=tmp_path / "logs"))


def _gc(tmp_path: Path, **retention) -> GcSettings:
    return GcSettings("* * * * * ?", tmp_path=str(tmp_path / "tmp"),
                      out_path=str(tmp_path / "out"), log_dir=str(tmp_path / "logs"), **retention)


def _submit(registry: Registry, resume: bool = False) -> str:
    workflow, _ = parse_workflow(LINEAR)
    submission = Submission(id=unique_id(), workflow=workflow, name=workflow.name, source=LINEAR,
                            resume=resume)
    registry.requests.add_submission(submission)
    return submission.id


def _run(registry: Registry, tmp_path: Path, resume: bool = False) -> str:
    sid = _submit(registry, resume)
    engine = Engine(registry, SERVICES, {}, _settings(tmp_path))
    asyncio.run(asyncio.wait_for(engine.run(until_submission=sid), 60))
    assert registry.views.get_submission(sid).status == "SUCCESS"
    return sid


def _age(registry: Registry, sid: str, days: int) -> None:
    with registry.db.write() as conn:
        conn.execute(update(submissions).where(submissions.c.id == sid)
                     .values(end_time=utcnow() - timedelta(days=days)))


def _stored(registry: Registry, sid: str) -> dict[str, int]:
    """Rows of each kind that belong to a submission."""
    chains = select(process_chains.c.id).where(process_chains.c.submission_id == sid)
    with registry.db.read() as conn:
        def count(table, where) -> int:
            return conn.execute(select(func.count()).select_from(table).where(where)).scalar()
        return {"submissions": count(submissions, submissions.c.id == sid),
                "processChains": count(process_chains, process_chains.c.submission_id == sid),
                "runs": count(runs, runs.c.chain_id.in_(chains)),
                "attempts": count(attempts, attempts.c.chain_id.in_(chains)),
                "events": count(events, events.c.submission_id == sid),
                "logChunks": count(log_chunks, log_chunks.c.chain_id.in_(chains))}


def _files(tmp_path: Path, registry: Registry, sid: str) -> dict[str, bool]:
    chains = [c.chain.id for c in registry.views.list_chains(sid)[0]]
    return {"tmp": (tmp_path / "tmp" / sid).exists(), "out": (tmp_path / "out" / sid).exists(),
            "logs": all((tmp_path / "logs" / f"{c}.log").exists() for c in chains) and bool(chains)}


def test_only_old_submissions_go_with_everything_of_theirs(database_url, tmp_path) -> None:
    registry = open_registry(database_url)
    old, older, new = (_run(registry, tmp_path) for _ in range(3))
    waiting = _submit(registry)  # never started: not finished, however old
    _age(registry, old, 10)
    _age(registry, older, 40)
    before = {sid: (_stored(registry, sid), _files(tmp_path, registry, sid))
              for sid in (old, older, new, waiting)}
    for sid in (old, older, new):
        stored, files = before[sid]
        assert min(stored.values()) >= 1 and all(files.values()), (stored, files)
    settings = _gc(tmp_path, retention_submissions_ms=30 * 86400_000,
                   retention_results_ms=7 * 86400_000)

    dry = collect_garbage(registry, settings, dry_run=True)
    assert dry.counts["submissions"] == 1 and dry.counts["resultDirs"] == 2
    assert {sid: (_stored(registry, sid), _files(tmp_path, registry, sid))
            for sid in before} == before  # nothing deleted

    report = collect_garbage(registry, settings)
    assert report.counts == dry.counts
    expected = before[older][0]
    assert {k: report.counts[k] for k in expected} == expected
    assert _stored(registry, older) == dict.fromkeys(expected, 0)
    assert not (tmp_path / "tmp" / older).exists() and not (tmp_path / "out" / older).exists()
    # finished 10 days ago: the record stays (30 d), the results go (7 d)
    assert _stored(registry, old) == before[old][0]
    assert (tmp_path / "tmp" / old).exists() and not (tmp_path / "out" / old).exists()
    assert sorted(p.stem for p in (tmp_path / "logs").glob("*.log")) == sorted(
        c.chain.id for sid in (old, new, waiting) for c in registry.views.list_chains(sid)[0])
    for sid in (new, waiting):
        assert (_stored(registry, sid), _files(tmp_path, registry, sid)) == before[sid]
    again = collect_garbage(registry, settings)
    assert again.counts["submissions"] == again.counts["resultDirs"] == 0


def test_the_files_of_reused_work_stay_while_a_submission_that_reused_them_does(
        database_url, tmp_path) -> None:
    """A submission that reused an older one's work reads that one's files, and keeps its
    stored results as links to them in its own folder (extensions 15): the collector deletes
    the older record but keeps its directories, and removes them with the last submission
    that reused them."""
    registry = open_registry(database_url)
    first = _run(registry, tmp_path, resume=True)
    second = _run(registry, tmp_path, resume=True)
    chains = registry.views.list_chains(second)[0]
    assert chains and all(c.reused and c.reused["submissionId"] == first for c in chains)
    named = [Path(p) for p in registry.views.get_submission(second).results["kept"]]
    assert named and all(p.is_relative_to(tmp_path / "out" / second) for p in named)
    earlier = [Path(p) for p in registry.views.get_submission(first).results["kept"]]
    assert [p.name for p in named] == [p.name for p in earlier]
    assert all(a.samefile(b) for a, b in zip(named, earlier))
    _age(registry, first, 40)
    settings = _gc(tmp_path, retention_submissions_ms=30 * 86400_000,
                   retention_results_ms=30 * 86400_000)

    dry = collect_garbage(registry, settings, dry_run=True)
    report = collect_garbage(registry, settings)
    assert report.counts == dry.counts
    assert (report.counts["submissions"], report.counts["tmpDirs"],
            report.counts["resultDirs"], report.counts["reusedElsewhere"]) == (1, 0, 0, 2)
    assert "kept 2 directories whose files submissions kept reused" in report.summary()
    assert registry.views.get_submission(first) is None
    assert all(p.exists() for p in named)  # the results of `second' are still there
    assert (tmp_path / "tmp" / first).exists()

    _age(registry, second, 40)  # the last one that reused them goes: so do they
    report = collect_garbage(registry, settings)
    assert (report.counts["submissions"], report.counts["reusedElsewhere"]) == (1, 0)
    assert not (tmp_path / "tmp" / first).exists() and not (tmp_path / "out" / first).exists()
    assert report.counts["tmpDirs"] >= 1 and report.counts["resultDirs"] >= 1


def test_an_engine_collects_on_its_cron_and_steepy_gc_once(tmp_path) -> None:
    db = f"sqlite:///{tmp_path / 'steepy.db'}"
    registry = open_registry(db)
    old, new = _run(registry, tmp_path), _run(registry, tmp_path)
    _age(registry, old, 10)
    environment = env(tmp_path, db, STEEPY_GARBAGECOLLECTOR_RETENTION_SUBMISSIONS="7d")
    out = subprocess.run(steepy("gc", "--dry-run"), cwd=ROOT, env=environment,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.startswith("would delete 1 submissions"), out
    assert registry.views.get_submission(old) is not None
    del environment["STEEPY_GARBAGECOLLECTOR_RETENTION_SUBMISSIONS"]
    out = subprocess.run(steepy("gc"), cwd=ROOT, env=environment, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 2 and "retention.submissions is not set" in out.stderr

    engine = Engine(registry, SERVICES, {}, _settings(
        tmp_path, _gc(tmp_path, retention_submissions_ms=7 * 86400_000)))

    async def work() -> None:
        task = asyncio.create_task(engine.run())
        for _ in range(100):  # the cron fires every second
            await asyncio.sleep(0.1)
            if await asyncio.to_thread(registry.views.get_submission, old) is None:
                break
        engine.stop.set()
        await task

    asyncio.run(work())
    assert registry.views.get_submission(old) is None
    assert registry.views.get_submission(new) is not None
    assert registry.schedules.timer_due("garbageCollector") is not None


@pytest.mark.parametrize("retention", ["submissions", "results"])
def test_a_submission_retried_after_it_was_listed_stays_with_its_files(
        tmp_path, retention: str) -> None:
    """`steepy retry' between the collector's read of old submissions and its deletion: the
    submission, RUNNING again, was deleted with its chains, events and directories (and its
    results, where only they were old enough)."""
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    sid = _run(registry, tmp_path)
    _age(registry, sid, 10)
    listed = registry.housekeeping.old_submissions

    def retried_meanwhile(*args, **kwargs):
        found = listed(*args, **kwargs)
        if found:  # what a retry writes (this one succeeded: `steepy retry' refuses it)
            with registry.db.write() as conn:
                conn.execute(update(submissions).where(submissions.c.id == sid)
                             .values(status="RUNNING", end_time=None))
        return found

    registry.housekeeping.old_submissions = retried_meanwhile  # type: ignore[method-assign]
    ms = int(timedelta(days=1).total_seconds() * 1000)
    report = collect_garbage(registry, _gc(tmp_path, retention_results_ms=ms, **(
        {"retention_submissions_ms": 2 * ms} if retention == "submissions" else {})))
    assert report.counts["submissions"] == 0 and report.counts["resultDirs"] == 0
    assert registry.views.get_submission(sid).status == "RUNNING"
    assert _files(tmp_path, registry, sid) == {"tmp": True, "out": True, "logs": True}


def test_where_tmp_path_is_out_path_results_go_only_as_results_do(tmp_path) -> None:
    """tmpPath and outPath one folder: the submission's temporary directory is its results'
    one, which the collector deleted with its records though retention.results was unset."""
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    settings = _settings(tmp_path)
    settings.out_path = settings.tmp_path

    def run_aged() -> str:
        sid = _submit(registry)
        engine = Engine(registry, SERVICES, {}, settings)
        asyncio.run(asyncio.wait_for(engine.run(until_submission=sid), 60))
        assert registry.views.get_submission(sid).status == "SUCCESS"
        _age(registry, sid, 10)
        return sid

    one = dict(tmp_path=str(tmp_path / "tmp"), out_path=str(tmp_path / "tmp"),
               log_dir=str(tmp_path / "logs"))
    day = int(timedelta(days=1).total_seconds() * 1000)
    sid = run_aged()
    [stored] = registry.views.get_submission(sid).results["kept"]
    report = collect_garbage(registry, GcSettings(retention_submissions_ms=day, **one))
    assert report.counts["submissions"] == 1 and Path(stored).is_file()
    sid = run_aged()  # (another; its results may go)
    report = collect_garbage(registry, GcSettings(retention_submissions_ms=day,
                                                  retention_results_ms=day, **one))
    assert report.counts["resultDirs"] == 1 and not (tmp_path / "tmp" / sid).exists()


def test_what_a_collector_killed_between_records_and_files_left_goes_with_the_next(
        tmp_path, monkeypatch) -> None:
    """The records go first, then the files: a collector killed in between (here: its file
    deletion fails as a kill would cut it) left the batch's directories and log files on disk
    for ever, since no record named them any more."""
    from steepy.engine import housekeeping

    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    sid = _run(registry, tmp_path)
    _age(registry, sid, 10)
    chains = [c.chain.id for c in registry.views.list_chains(sid)[0]]
    day = int(timedelta(days=1).total_seconds() * 1000)
    settings = _gc(tmp_path, retention_submissions_ms=day, retention_results_ms=day)

    def killed(self, *args) -> None:
        raise KeyboardInterrupt  # (as the process ends there)

    with monkeypatch.context() as patched:
        patched.setattr(housekeeping._Files, "of_batch", killed)
        with pytest.raises(KeyboardInterrupt):
            collect_garbage(registry, settings)
    assert registry.views.get_submission(sid) is None
    assert (tmp_path / "tmp" / sid).exists() and (tmp_path / "out" / sid).exists()
    assert [o.id for o in registry.housekeeping.leftovers()] == [sid]
    report = collect_garbage(registry, settings)
    assert (report.counts["tmpDirs"], report.counts["resultDirs"]) == (1, 1)
    assert report.counts["logFiles"] == len(chains) > 0
    assert not (tmp_path / "tmp" / sid).exists() and not (tmp_path / "out" / sid).exists()
    assert registry.housekeeping.leftovers() == []
