"""The garbage collector leaves no reuse record (extensions 15) that names files it deleted:
when `retention.results` deletes a submission's results before its records, the records of
the chains whose outputs were in that directory are dropped before it goes; those whose
outputs are under tmpPath (kept with the submission) stay, as do the files and records a
submission whose results are kept reused. A dry run counts the records and drops none.
Tester's defect B: the result directory went and its records stayed. On a real SQLite
database with real files."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select, update

from steepy.engine.housekeeping import GcSettings, collect_garbage
from steepy.model import ProcessChain, Submission, Workflow
from steepy.model.common import utcnow
from steepy.registry import Registry, open_registry
from steepy.registry.cache import CacheWrite, Pending, Reused
from steepy.registry.writes import RoundWrite
from steepy.registry.tables import cache_entries, submissions

DAY_MS = 86400_000


@pytest.fixture
def registry(tmp_path: Path):
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    yield registry
    registry.close()


def _settings(tmp_path: Path) -> GcSettings:
    """Records for 30 days, results for 7."""
    return GcSettings("* * * * * ?", retention_submissions_ms=30 * DAY_MS,
                      retention_results_ms=7 * DAY_MS, tmp_path=str(tmp_path / "tmp"),
                      out_path=str(tmp_path / "out"), log_dir=str(tmp_path / "logs"))


def _file(path: Path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(path.name)
    return str(path)


def _output(path: str) -> list[dict]:
    return [{"path": path, "results": [path], "fingerprint": [1, 2]}]


def _chains(registry: Registry, sid: str, done: dict[str, list[list[dict]]],
            pending: tuple[str, ...] = (), reused: tuple[Reused, ...] = ()) -> None:
    """Submission `sid' with chains that succeeded (their outputs per executable), chains
    that never did, and chains that reused earlier ones."""
    registry.requests.add_submission(Submission(id=sid, workflow=Workflow(name=sid)))
    ids = [*done, *pending, *(r.chain_id for r in reused)]
    registry.submissions.controller_round(sid, RoundWrite(
        1, chains=[ProcessChain(c) for c in ids], save_state=True, state={},
        cache=CacheWrite(pending=[Pending(f"K-{c}", f"k-{c}-{i}", c, f"e{i}", i)
                                  for c in [*done, *pending]
                                  for i in range(len(done.get(c, [[]])))],
                         reused=list(reused))))
    if done:
        registry.submissions.controller_round(sid, RoundWrite(2, fed=list(done), cache=CacheWrite(
            completed=list(done.items()))))


def _ended(registry: Registry, sid: str, days_ago: float) -> None:
    with registry.db.write() as conn:
        conn.execute(update(submissions).where(submissions.c.id == sid).values(
            status="SUCCESS", end_time=utcnow() - timedelta(days=days_ago)))


def _recorded(registry: Registry) -> dict[str, list[list[str]]]:
    """Every reuse record's chain -> the paths its outputs name, by position."""
    found: dict[str, list[list[str]]] = {}
    with registry.db.read() as conn:
        for chain_id, outputs in conn.execute(select(
                cache_entries.c.chain_id, cache_entries.c.outputs)
                .order_by(cache_entries.c.chain_id, cache_entries.c.position)):
            found.setdefault(chain_id, []).append(
                [o["path"] for o in json.loads(outputs)] if outputs else [])
    return found


def test_results_deleted_before_their_records_take_the_records_naming_them(
        registry: Registry, tmp_path: Path) -> None:
    out, tmp = tmp_path / "out" / "s1", tmp_path / "tmp" / "s1"
    _chains(registry, "s1", {
        # a chain whose second executable stored its output: its whole record goes
        "stored": [_output(_file(tmp / "a")), _output(_file(out / "b"))],
        # one that wrote under tmpPath only: that stays with the submission's records
        "temporary": [_output(_file(tmp / "c"))]},
        pending=("failed",))  # never succeeded: no outputs named
    _ended(registry, "s1", 10)
    before = _recorded(registry)
    assert set(before) == {"stored", "temporary", "failed"}

    dry = collect_garbage(registry, _settings(tmp_path), dry_run=True)
    assert (dry.counts["cacheEntries"], dry.counts["resultDirs"]) == (2, 1)
    assert _recorded(registry) == before and out.is_dir()  # nothing deleted

    report = collect_garbage(registry, _settings(tmp_path))
    assert report.counts == dry.counts
    assert "2 cacheEntries" in report.summary()
    assert not out.exists() and tmp.is_dir()
    assert registry.views.get_submission("s1") is not None  # its records stay (30 days)
    assert _recorded(registry) == {"temporary": before["temporary"], "failed": [[]]}
    assert registry.cache.lookup(["K-stored"]) == {}
    assert [e.chain_id for (e,) in registry.cache.lookup(["K-temporary"])["K-temporary"]] == [
        "temporary"]
    # what the documentation promises: no record names a file that is gone
    assert all(Path(p).exists() for paths in _recorded(registry).values()
               for ps in paths for p in ps)

    again = collect_garbage(registry, _settings(tmp_path))
    assert (again.counts["cacheEntries"], again.counts["resultDirs"]) == (0, 0)


def test_results_a_kept_submission_reused_keep_their_records_until_they_go(
        registry: Registry, tmp_path: Path) -> None:
    stored = _file(tmp_path / "out" / "s1" / "b")
    _chains(registry, "s1", {"c1": [_output(stored)]})
    _chains(registry, "s2", {}, reused=(Reused("c2", {"x": [stored]}, "s1", "c1"),))
    _ended(registry, "s1", 10)
    _ended(registry, "s2", 1)  # its results (s1's files) are kept

    report = collect_garbage(registry, _settings(tmp_path))
    assert (report.counts["cacheEntries"], report.counts["resultDirs"],
            report.counts["reusedElsewhere"]) == (0, 0, 1)
    assert Path(stored).exists() and set(_recorded(registry)) == {"c1"}

    _ended(registry, "s2", 10)  # now its results expire too: s1's files and records go
    report = collect_garbage(registry, _settings(tmp_path))
    assert (report.counts["cacheEntries"], report.counts["reusedElsewhere"]) == (1, 0)
    assert not Path(stored).exists() and _recorded(registry) == {}


@pytest.mark.process
def test_a_rerun_after_the_results_went_runs_again_and_records_anew(
        tmp_path: Path, monkeypatch) -> None:
    """Real runs: the engine records its outputs, `retention.results` takes the files and
    those records; a later run with --resume runs the chain again (nothing to reuse) and its
    records name files that are there."""
    from steepy.agent import AgentConfig
    from steepy.documents.loading import parse_workflow, read_services
    from steepy.engine.engine import Engine, EngineSettings
    from steepy.model.ids import unique_id
    from tests.conftest import ROOT
    from tests.schedules.test_gc import LINEAR

    monkeypatch.chdir(ROOT)
    services = read_services(str(ROOT / "services"))
    source = LINEAR  # (tests/schedules/test_gc.py: talk, then keep what was said)
    registry = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    settings = EngineSettings(
        tmp_path=str(tmp_path / "tmp"), out_path=str(tmp_path / "out"), agents=1,
        sweep_s=0.5, heartbeat_s=0.5, lease_s=3, agent=AgentConfig(log_dir=tmp_path / "logs"))

    def run() -> str:
        workflow, _ = parse_workflow(source)
        submission = Submission(id=unique_id(), workflow=workflow, name="kept", source=source,
                                resume=True)
        registry.requests.add_submission(submission)
        engine = Engine(registry, services, {}, settings)
        asyncio.run(asyncio.wait_for(engine.run(until_submission=submission.id), 60))
        assert registry.views.get_submission(submission.id).status == "SUCCESS"
        return submission.id

    try:
        first = run()
        assert _recorded(registry) and all(
            Path(p).exists() for paths in _recorded(registry).values() for ps in paths
            for p in ps)
        second = run()
        assert all(c.reused for c in registry.views.list_chains(second)[0])
        for sid in (first, second):
            _ended(registry, sid, 10)

        report = collect_garbage(registry, _settings(tmp_path))
        assert report.counts["resultDirs"] == 2  # first's, and second's links to its files
        assert report.counts["cacheEntries"] >= 2  # both executables of the chain
        assert _recorded(registry) == {}
        assert not (tmp_path / "out" / first).exists()
        assert not (tmp_path / "out" / second).exists()

        third = run()
        assert not any(c.reused for c in registry.views.list_chains(third)[0])
        assert all(Path(p).exists() for paths in _recorded(registry).values()
                   for ps in paths for p in ps)
    finally:
        registry.close()
