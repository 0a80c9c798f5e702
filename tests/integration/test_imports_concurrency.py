"""Two imports at once, and a crash, on a database with real commits (SQLite and PostgreSQL).

These tests need committed transactions seen by other connections, so they use a database of
their own (seeded once for the module) instead of the rolled-back test transaction. Each test
only compares the catalog before and after itself.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session, sessionmaker

from tests.import_support import TEST_ACTOR, edit_rows, fingerprint, scaled, shipped_text
from wheretorun.db import make_session_factory
from wheretorun.errors import Conflict
from wheretorun.pricing.bootstrap import prepare_database
from wheretorun.pricing.imports import ImportSpec, import_content
from wheretorun.pricing.models import CloudOffer, ImportRun


@pytest.fixture(scope="module")
def committed(backend: str, empty_engine_factory: Any) -> Engine:
    engine: Engine = empty_engine_factory(backend)
    prepare_database(engine)
    return engine


@pytest.fixture
def factory(committed: Engine) -> sessionmaker[Session]:
    return make_session_factory(committed)


@pytest.fixture
def pool() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(max_workers=2) as executor:
        yield executor


def nebius(factor: str) -> bytes:
    return edit_rows(shipped_text("nebius"), scaled("Price", factor)).encode()


def import_in_own_transaction(
    factory: sessionmaker[Session], content: bytes, lock_timeout_s: float = 10, on_progress: Any = None
) -> ImportRun:
    with factory.begin() as session:
        return import_content(
            session,
            ImportSpec("skypilot", "nebius"),
            content,
            "nebius_vms.csv",
            TEST_ACTOR,
            lock_timeout_s=lock_timeout_s,
            on_progress=on_progress,
        )


class Paused:
    """An `on_progress` that stops the import after its first written batch until released."""

    def __init__(self) -> None:
        self.writing = threading.Event()
        self.release = threading.Event()

    def __call__(self, done: int, total: int) -> None:
        self.writing.set()
        assert self.release.wait(20), "the test never released the paused import"


def start_paused(
    pool: ThreadPoolExecutor, factory: sessionmaker[Session], content: bytes
) -> tuple[Paused, Future[ImportRun]]:
    paused = Paused()
    first = pool.submit(import_in_own_transaction, factory, content, 10, paused)
    assert paused.writing.wait(20), "the first import did not start writing"
    return paused, first


def nebius_prices(factory: sessionmaker[Session]) -> dict[str, Any]:
    with factory() as session:
        query = select(CloudOffer.instance_type, CloudOffer.region, CloudOffer.on_demand_usd_per_hour).where(
            CloudOffer.provider == "nebius", CloudOffer.effective_to.is_(None)
        )
        return {f"{instance}@{region}": price for instance, region, price in session.execute(query)}


def test_a_second_import_waits_for_the_first_and_diffs_against_its_result(
    factory: sessionmaker[Session], pool: ThreadPoolExecutor
) -> None:
    paused, first = start_paused(pool, factory, nebius("1.5"))
    second = pool.submit(import_in_own_transaction, factory, nebius("2.0"))
    assert not second.done()
    assert not first.done()
    with pytest.raises(TimeoutError):
        second.result(timeout=0.5)  # blocked on the lock, not interleaving its writes
    paused.release.set()
    a, b = first.result(timeout=20), second.result(timeout=20)

    assert a.status == b.status == "applied"
    assert b.based_on_version_id == a.catalog_version_id  # B saw A's catalog, not the one before it
    assert b.diff["changed"] == 21
    assert b.diff["examples"]["changed"][0]["prices"][0]["change_pct"] == pytest.approx(33.33)  # 1.5x -> 2x
    prices = nebius_prices(factory)
    assert len(prices) == 21  # one current row per offer
    assert str(prices["gpu-h100-sxm_8gpu-128vcpu-1600gb@eu-north1"]) in {"47.2", "47.200000"}


def test_a_second_import_that_cannot_wait_gets_a_conflict_and_writes_nothing(
    factory: sessionmaker[Session], pool: ThreadPoolExecutor
) -> None:
    with factory() as session:
        before = fingerprint(session)
    paused, first = start_paused(pool, factory, nebius("3.0"))
    try:
        started = time.monotonic()
        with pytest.raises(Conflict, match="another import or write held the lock") as refused:
            import_in_own_transaction(factory, nebius("4.0"), lock_timeout_s=0.3)
        elapsed = time.monotonic() - started
    finally:
        paused.release.set()
    # The message states the wait there was (it once said "30 s" after 0.17 s).
    stated = float(re.search(r"waited ([0-9.]+) s", str(refused.value)).group(1))  # type: ignore[union-attr]
    assert 0.3 <= stated + 0.05
    assert stated <= elapsed + 0.05
    assert first.result(timeout=20).status == "applied"
    with factory() as session:
        after = fingerprint(session)
    changed = {table for table in after if after[table] != before[table]}
    assert changed == {
        "catalog_versions",
        "cloud_offers",
        "import_runs",
        "audit_log",
    }  # the first import only
    assert after["import_runs"][0] == before["import_runs"][0] + 1


def test_a_crash_in_a_committed_database_leaves_it_as_it_was(factory: sessionmaker[Session]) -> None:
    with factory() as session:
        before = fingerprint(session)

    def crash(done: int, total: int) -> None:
        if done >= total / 2:
            raise RuntimeError("killed")

    with pytest.raises(RuntimeError, match="killed"):
        import_in_own_transaction(
            factory, edit_rows(shipped_text("aws"), scaled("Price", "1.3")).encode(), on_progress=crash
        )
    with factory() as session:
        assert fingerprint(session) == before
