"""A SQLite file that goes away or is overwritten under an open registry: SQLite itself would
go on using a deleted file (what it writes then is lost), and serve the pages of a corrupted
one that are still whole or cached; the registry says what is wrong instead
(DatabaseUnavailable, a database failure: callers wait) until the file changes, and once
the file is back it opens it afresh."""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from steepy.registry import dbfile, open_registry
from steepy.registry.failures import DatabaseUnavailable, is_database_failure


@pytest.fixture
def registry(tmp_path, monkeypatch):
    monkeypatch.setattr(dbfile, "FILE_CHECK_S", 0.0)  # look every time
    opened = open_registry(f"sqlite:///{tmp_path / 'steepy.db'}")
    yield opened
    opened.db.engine.dispose()


def _backup(db: Path, to: Path) -> None:
    with sqlite3.connect(db) as source, sqlite3.connect(to) as target:
        source.backup(target)
    source.close()
    target.close()


def _fails(registry, cause: str) -> None:
    with pytest.raises(DatabaseUnavailable) as raised:
        registry.views.count_submissions()
    assert cause in str(raised.value) and is_database_failure(raised.value)
    with pytest.raises(DatabaseUnavailable):
        registry.leases.heartbeat("me", [], 10)
    assert cause in registry.db.problem()


def test_deleted_then_restored(registry, tmp_path) -> None:
    db = tmp_path / "steepy.db"
    registry.leases.heartbeat("me", [], 10)
    _backup(db, tmp_path / "backup.db")
    db.unlink()
    _fails(registry, f"database {db}: its file is gone (deleted or moved away)")
    assert not db.exists()  # no empty database made in its place
    shutil.copy(tmp_path / "backup.db", tmp_path / "restored.db")
    os.replace(tmp_path / "restored.db", db)
    assert registry.db.problem() is None
    assert registry.views.count_submissions() == 0
    registry.leases.heartbeat("me", [], 10)
    registry.db.close()
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"



def test_another_database_made_in_its_place_is_not_used(registry, tmp_path) -> None:
    """Deleted, then a new database made at the same path (`steepy submit' there): it holds
    none of this process's submissions and runs, and a worker that went on in it failed a
    foreign key with a traceback (found by a review). It is refused, saying so, until the
    database this process opened is back (a restored copy has its id)."""
    db = tmp_path / "steepy.db"
    registry.leases.heartbeat("me", [], 10)
    _backup(db, tmp_path / "backup.db")
    db.unlink()
    _fails(registry, "its file is gone")
    other = open_registry(f"sqlite:///{db}")  # a new database where ours was
    other.leases.heartbeat("other", [], 10)
    _fails(registry, f"database {db}: another database is at its path now")
    _fails(registry, "another database")  # (and stays refused: nothing of it is used)
    assert other.views.count_submissions() == 0  # it works for whoever opened it
    other.close()
    os.replace(tmp_path / "backup.db", db)  # ours is back
    assert registry.db.problem() is None
    registry.leases.heartbeat("me", [], 10)


def test_another_database_copied_in_bit_by_bit_is_still_refused(registry, tmp_path) -> None:
    """A look while the other database is being copied into place cannot read its id: that
    is no answer, and once the copy is whole it is refused all the same (a review saw it
    taken for ours)."""
    db = tmp_path / "steepy.db"
    registry.leases.heartbeat("me", [], 10)
    other = open_registry(f"sqlite:///{tmp_path / 'other.db'}")
    other.close()
    whole = (tmp_path / "other.db").read_bytes()
    for name in ("steepy.db", "steepy.db-wal", "steepy.db-shm"):  # (`rm steepy.db*')
        (tmp_path / name).unlink(missing_ok=True)
    _fails(registry, "its file is gone")
    db.write_bytes(whole[:4096])  # the copy under way: its first page
    with pytest.raises(Exception) as raised:
        registry.views.count_submissions()
    assert is_database_failure(raised.value)
    db.write_bytes(whole)  # (the same file, now whole)
    _fails(registry, "another database is at its path now")


def test_a_backup_from_before_ids_is_taken_back(registry, tmp_path) -> None:
    """A copy made by a steepy before migration 0018 has no id to compare: it is taken back,
    as every restored copy was before."""
    db = tmp_path / "steepy.db"
    registry.leases.heartbeat("me", [], 10)
    _backup(db, tmp_path / "backup.db")
    with sqlite3.connect(tmp_path / "backup.db") as old:
        old.execute("DROP TABLE database_identity")
    old.close()
    db.unlink()
    _fails(registry, "its file is gone")
    os.replace(tmp_path / "backup.db", db)
    assert registry.db.problem() is None
    registry.leases.heartbeat("me", [], 10)

def test_overwritten_then_restored(registry, tmp_path) -> None:
    db = tmp_path / "steepy.db"
    registry.views.count_submissions()
    _backup(db, tmp_path / "backup.db")
    registry.db.checkpoint(last=True)
    db.write_bytes(b"\x13" * db.stat().st_size)
    registry.engine.dispose()  # (no page cached)
    with pytest.raises(Exception) as raised:  # SQLite's own words
        registry.views.count_submissions()
    assert is_database_failure(raised.value)
    _fails(registry, "its file is not a SQLite database (file is not a database)")
    time.sleep(0.01)
    db.write_bytes((tmp_path / "backup.db").read_bytes())
    assert registry.db.problem() is None
    assert registry.views.count_submissions() == 0


def test_corruption_sqlite_finds_stays_until_the_file_changes(registry, tmp_path) -> None:
    """Page 1 whole, the rest garbage: SQLite says "malformed" when it reads a broken page;
    the registry then refuses every transaction, also those whose pages are still whole."""
    db = tmp_path / "steepy.db"
    registry.views.count_submissions()
    registry.db.checkpoint(last=True)
    good = db.read_bytes()
    page = int.from_bytes(good[16:18], "big")
    db.write_bytes(good[:page] + b"\x13" * (len(good) - page))
    registry.engine.dispose()  # (no page cached)
    with pytest.raises(Exception) as raised:
        registry.views.count_submissions()
    assert is_database_failure(raised.value)
    _fails(registry, "its file is corrupted")
    time.sleep(0.01)
    db.write_bytes(good)
    assert registry.db.problem() is None
    assert registry.views.count_submissions() == 0


def test_a_new_database_is_its_owners_alone_and_an_old_one_keeps_its_mode(tmp_path) -> None:
    """A file steepy makes holds the workflows and the webhooks' URLs: 0600, and so is the
    WAL that SQLite makes beside it; a file that exists (shared on purpose) keeps its mode."""
    old = os.umask(0o022)  # (the usual umask: a plain file would be 0644)
    try:
        made = open_registry(f"sqlite:///{tmp_path / 'new' / 'steepy.db'}")
        with made.db.write() as conn:
            conn.exec_driver_sql("CREATE TABLE probe (x)")
        for name in ("steepy.db", "steepy.db-wal"):
            assert (tmp_path / "new" / name).stat().st_mode & 0o777 == 0o600, name
        made.db.engine.dispose()
        shared = tmp_path / "shared.db"
        sqlite3.connect(shared).close()
        shared.chmod(0o664)
        open_registry(f"sqlite:///{shared}").db.engine.dispose()
        assert shared.stat().st_mode & 0o777 == 0o664
    finally:
        os.umask(old)
