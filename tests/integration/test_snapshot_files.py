"""Catalog snapshots cached on disk between processes (`SnapshotFiles`): read back equal, keyed by
catalog version and database, never half-written, and an unreadable file is a miss."""

from __future__ import annotations

import datetime as dt
import threading
from pathlib import Path

from sqlalchemy.orm import Session

from wheretorun.pricing.models import CatalogVersion
from wheretorun.pricing.snapshot import SnapshotCache
from wheretorun.pricing.snapshot_files import SnapshotFiles


def test_a_new_process_reads_the_snapshot_another_one_saved(session: Session, tmp_path: Path) -> None:
    built = SnapshotCache(files=SnapshotFiles(tmp_path)).get(session)
    assert len(list(tmp_path.glob("*.pickle"))) == 1
    loaded = SnapshotCache(files=SnapshotFiles(tmp_path)).get(session)  # a fresh in-memory cache
    assert loaded is not built
    assert loaded == built
    assert len(loaded.cloud_offers) > 1000


def test_a_new_catalog_version_is_a_new_file(session: Session, tmp_path: Path) -> None:
    first = SnapshotCache(files=SnapshotFiles(tmp_path)).get(session)
    session.add(
        CatalogVersion(created_at=dt.datetime.now(dt.UTC), kind="import", description="test", sources=[])
    )
    session.flush()
    newer = SnapshotCache(files=SnapshotFiles(tmp_path)).get(session)
    assert newer.version > first.version
    assert len(list(tmp_path.glob("*.pickle"))) == 2


def test_an_unreadable_file_is_rebuilt(session: Session, tmp_path: Path) -> None:
    built = SnapshotCache(files=SnapshotFiles(tmp_path)).get(session)
    (saved,) = tmp_path.glob("*.pickle")
    saved.write_bytes(saved.read_bytes()[:1000])  # as if a crash cut it short
    rebuilt = SnapshotCache(files=SnapshotFiles(tmp_path)).get(session)
    assert rebuilt.cloud_offers == built.cloud_offers
    assert SnapshotFiles(tmp_path).load(("no", "such", "key")) is None


def test_readers_beside_writers_see_a_whole_snapshot_or_none(session: Session, tmp_path: Path) -> None:
    snapshot = SnapshotCache().get(session)
    files = SnapshotFiles(tmp_path)
    key = ("shared",)
    seen: list[object] = []

    def write() -> None:
        for _ in range(5):
            files.save(key, snapshot)

    def read() -> None:
        for _ in range(20):
            seen.append(files.load(key))

    threads = [threading.Thread(target=write) for _ in range(2)] + [threading.Thread(target=read)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(item is None or item == snapshot for item in seen)
    assert files.load(key) == snapshot
    assert not list(tmp_path.glob("*.tmp"))  # no temporary file left behind
