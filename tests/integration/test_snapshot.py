"""The catalog snapshot handed to the engine: what is in it, what is left out, and as-of dates."""

from __future__ import annotations

import concurrent.futures
import datetime as dt
import gc
import threading
import time
from decimal import Decimal

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from wheretorun import heap
from wheretorun.engine.catalog import CatalogSnapshot
from wheretorun.pricing import snapshot as snapshot_module
from wheretorun.pricing.models import ApiPrice, CatalogVersion, CloudOffer, HardwarePrice
from wheretorun.pricing.overrides import OverrideSpec, create_override, end_override
from wheretorun.pricing.snapshot import SnapshotCache, build_snapshot
from wheretorun.security import Actor


def _count(session: Session, *where: object) -> int:
    return session.scalar(select(func.count()).select_from(CloudOffer).where(*where)) or 0


def test_snapshot_holds_every_trustworthy_current_price(session: Session) -> None:
    snapshot = build_snapshot(session)
    trustworthy = _count(
        session,
        CloudOffer.effective_to.is_(None),
        CloudOffer.suspect_reason.is_(None),
        CloudOffer.accelerator_id.is_not(None),
    )
    assert len(snapshot.cloud_offers) == trustworthy
    suspect_ids = set(session.scalars(select(ApiPrice.id).where(ApiPrice.suspect_reason.is_not(None))))
    assert suspect_ids
    assert not suspect_ids & {price.id for price in snapshot.api_prices}
    assert len(snapshot.hardware_prices) == session.scalar(select(func.count()).select_from(HardwarePrice))
    assert snapshot.version >= 1


def test_snapshot_turns_catalog_rows_into_engine_values(session: Session) -> None:
    snapshot = build_snapshot(session)
    h100 = snapshot.accelerators["h100-sxm"].spec
    assert h100 is not None
    assert h100.memory_gb == 80
    assert h100.memory_bandwidth_gb_s == 3350
    deepseek = snapshot.models["deepseek-v3"].architecture
    assert deepseek is not None
    # MLA caches one 576-element latent per layer (kv_lora_rank 512 + rope 64), calibration models.csv
    assert deepseek.cached_elements_per_layer == 576
    assert deepseek.active_params_b is not None
    assert deepseek.active_params_b < deepseek.total_params_b
    proprietary = [m for m in snapshot.models.values() if not m.open_weights]
    assert proprietary
    assert all(m.architecture is None for m in proprietary)


def test_snapshot_before_the_catalog_has_no_prices(session: Session) -> None:
    snapshot = build_snapshot(session, dt.datetime(2000, 1, 1, tzinfo=dt.UTC))
    assert snapshot.cloud_offers == ()
    assert snapshot.api_prices == ()


def test_cache_returns_the_same_snapshot_until_the_version_changes(session: Session) -> None:
    cache = SnapshotCache()
    first = cache.get(session)
    assert cache.get(session) is first
    past = cache.get(session, dt.datetime(2000, 1, 1, tzinfo=dt.UTC))
    assert past is not first
    session.add(
        CatalogVersion(created_at=dt.datetime.now(dt.UTC), kind="import", description="test", sources=[])
    )
    session.flush()
    newer = cache.get(session)
    assert newer is not first
    assert newer.version > first.version  # sequences are not rolled back on PostgreSQL


def test_a_settling_cache_freezes_the_snapshot(session: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    """The API's cache freezes what is alive after the process's first snapshot (gc.freeze), so
    full collections no longer scan the snapshot's objects; a plain cache does not."""

    def scanned(value: object) -> bool:
        return any(item is value for item in gc.get_objects())

    monkeypatch.setattr(heap, "_settled", set())  # as in a new process
    plain = SnapshotCache().get(session, dt.datetime(2030, 1, 1, tzinfo=dt.UTC))
    assert scanned(plain.cloud_offers)
    settled = SnapshotCache(settle=True).get(session)
    assert gc.get_freeze_count() > len(settled.cloud_offers) > 0
    assert not scanned(settled.cloud_offers)
    later = SnapshotCache(settle=True).get(session, dt.datetime(2031, 1, 1, tzinfo=dt.UTC))
    assert scanned(later.cloud_offers)  # once per process


def test_an_override_ended_in_the_same_session_changes_the_cached_snapshot(session: Session) -> None:
    """The catalog-state check goes through the session, so a change it has not flushed yet (an
    override just ended) gives a new snapshot, not the cached one with the old price."""
    now = dt.datetime.now(dt.UTC)
    actor = Actor("cli:test")
    spec = OverrideSpec(applies_to="cloud_offers", provider="aws", reason="test", multiplier=Decimal("2"))
    override = create_override(session, spec, actor, now)
    cache = SnapshotCache()
    doubled = cache.get(session)
    end_override(session, override.id, actor, now)
    ended = cache.get(session)

    def aws_price(snapshot: CatalogSnapshot, offer_id: str) -> Decimal | None:
        return next(o.on_demand_usd_per_hour for o in snapshot.cloud_offers if o.id == offer_id)

    offer = next(o for o in doubled.cloud_offers if o.provider == "aws" and o.on_demand_usd_per_hour)
    assert ended is not doubled
    assert offer.on_demand_usd_per_hour == 2 * aws_price(ended, offer.id)  # type: ignore[operator]


def test_ending_an_override_changes_the_snapshot_whatever_the_other_overrides_ends(session: Session) -> None:
    """The fingerprint covers every override's end: ending one before another override's (later)
    end still gives a new snapshot, not the cached one with the override applied."""
    now = dt.datetime.now(dt.UTC)
    actor = Actor("cli:test")
    halved = OverrideSpec(applies_to="cloud_offers", provider="aws", reason="test", multiplier=Decimal("0.5"))
    lasting = OverrideSpec(
        applies_to="cloud_offers",
        provider="gcp",
        reason="test",
        multiplier=Decimal("2"),
        effective_to=now + dt.timedelta(days=30),
    )
    override = create_override(session, halved, actor, now)
    create_override(session, lasting, actor, now)
    cache = SnapshotCache()
    before = cache.get(session)
    end_override(session, override.id, actor, now)
    after = cache.get(session)
    offer = next(o for o in before.cloud_offers if o.provider == "aws" and o.on_demand_usd_per_hour)
    again = next(o for o in after.cloud_offers if o.id == offer.id)
    assert after is not before
    assert again.on_demand_usd_per_hour == 2 * offer.on_demand_usd_per_hour  # type: ignore[operator]


@pytest.fixture
def fixed_catalog_state(session: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    """The catalog-state statement answered once, so the builds the tests count run on no database."""
    state = snapshot_module._catalog_state(session, None)
    monkeypatch.setattr(snapshot_module, "_catalog_state", lambda _session, _as_of: state)


@pytest.mark.usefixtures("fixed_catalog_state")
def test_requests_that_arrive_together_on_a_cold_cache_wait_for_one_build(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Eight threads ask a cold cache at once: the snapshot is built once and all get that one."""
    built = snapshot_module.build_snapshot(session)
    builds = []

    def slow_build(_session: object, _as_of: object) -> CatalogSnapshot:
        builds.append(threading.get_ident())
        time.sleep(0.3)  # long enough for every thread to arrive while it runs
        return built

    monkeypatch.setattr(snapshot_module, "build_snapshot", slow_build)
    cache = SnapshotCache()
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(lambda _: cache.get(session), range(8)))
    assert len(builds) == 1
    assert all(answer is built for answer in answers)


@pytest.mark.usefixtures("fixed_catalog_state")
def test_a_failed_build_is_retried_by_the_next_request(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = snapshot_module.build_snapshot(session)
    outcomes: list[object] = [RuntimeError("the database went away"), built]

    def flaky_build(_session: object, _as_of: object) -> CatalogSnapshot:
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return built

    monkeypatch.setattr(snapshot_module, "build_snapshot", flaky_build)
    cache = SnapshotCache()
    with pytest.raises(RuntimeError, match="went away"):
        cache.get(session)
    assert cache.get(session) is built


@pytest.mark.usefixtures("fixed_catalog_state")
def test_a_build_that_fails_fails_every_request_waiting_for_it_once(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The waiters share the builder's outcome: a failing database is asked once, not once each."""
    builds = []

    def failing_build(_session: object, _as_of: object) -> CatalogSnapshot:
        builds.append(threading.get_ident())
        time.sleep(0.3)
        raise RuntimeError("the database went away")

    monkeypatch.setattr(snapshot_module, "build_snapshot", failing_build)
    cache = SnapshotCache()

    def attempt(_: int) -> str:
        try:
            cache.get(session)
        except Exception as error:  # the builder's own error, or Unavailable naming it
            return str(error)
        return "answered"

    with concurrent.futures.ThreadPoolExecutor(max_workers=5) as pool:
        outcomes = list(pool.map(attempt, range(5)))
    assert len(builds) == 1
    assert all("the database went away" in outcome for outcome in outcomes)
