"""The seed loads the shipped public data faithfully. Expected counts are computed here from the
source files with the csv/json modules, independently of the readers under test."""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from decimal import Decimal

import pytest
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from tests.sources import EPOCH_FILE, LITELLM_FILE, SKYPILOT_DIR
from wheretorun.pricing.bootstrap import seed_if_empty
from wheretorun.pricing.models import Accelerator, ApiPrice, CatalogVersion, CloudOffer
from wheretorun.pricing.repositories import resolve_accelerator_id


def _skypilot_rows(provider: str) -> list[dict[str, str]]:
    with (SKYPILOT_DIR / f"{provider}_vms.csv").open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _providers() -> list[str]:
    return sorted(path.name.removesuffix("_vms.csv") for path in SKYPILOT_DIR.glob("*_vms.csv"))


def _regional_offers(provider: str) -> set[tuple[str, str, Decimal, str]]:
    """Distinct (instance type, accelerator, count, region): zones collapsed."""
    return {
        (row["InstanceType"], row["AcceleratorName"], Decimal(row["AcceleratorCount"]), row["Region"])
        for row in _skypilot_rows(provider)
    }


def test_every_provider_file_is_loaded_once_per_region(session: Session) -> None:
    counts = dict(
        session.execute(
            select(CloudOffer.provider, func.count())
            .where(CloudOffer.effective_to.is_(None))
            .group_by(CloudOffer.provider)
        ).all()
    )
    assert set(counts) == set(_providers())
    for provider in _providers():
        assert counts[provider] == len(_regional_offers(provider)), provider
    assert sum(counts.values()) > 1000


def test_zones_collapse_to_regions_with_their_zone_count(session: Session) -> None:
    zones: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for row in _skypilot_rows("aws"):
        zones[(row["InstanceType"], row["Region"], row["AcceleratorCount"])].add(row["AvailabilityZone"])
    offers = session.scalars(select(CloudOffer).where(CloudOffer.provider == "aws")).all()
    assert offers
    for offer in offers:
        key = (offer.instance_type, offer.region, _count_text(offer.accelerator_count, zones, offer))
        assert offer.zone_count == len(zones[key]), key


def _count_text(count: Decimal, zones: dict[tuple[str, str, str], set[str]], offer: CloudOffer) -> str:
    return next(
        k[2] for k in zones if k[0] == offer.instance_type and k[1] == offer.region and Decimal(k[2]) == count
    )


def test_on_demand_prices_are_exact_and_missing_ones_stay_unknown(session: Session) -> None:
    published: dict[tuple[str, str], set[str]] = defaultdict(set)
    for row in _skypilot_rows("lambda"):
        published[(row["InstanceType"], row["Region"])].add(row["Price"])
    offers = session.scalars(select(CloudOffer).where(CloudOffer.provider == "lambda")).all()
    assert len(offers) == len(published) > 10  # one offer per published instance type and region
    for offer in offers:
        (price_text,) = published[(offer.instance_type, offer.region)]
        expected = Decimal(price_text) if price_text.strip() else None
        assert offer.on_demand_usd_per_hour == expected
    # AWS p5e.48xlarge has no on-demand price in the source: unknown, not 0
    p5e = session.scalars(select(CloudOffer).where(CloudOffer.instance_type == "p5e.48xlarge")).all()
    assert p5e
    assert all(o.on_demand_usd_per_hour is None for o in p5e)


def test_every_source_accelerator_name_resolves(session: Session) -> None:
    names = {row["AcceleratorName"] for provider in _providers() for row in _skypilot_rows(provider)}
    assert len(names) > 60  # every cloud's spellings were read, not an empty folder
    unresolved = sorted(name for name in names if resolve_accelerator_id(session, name) is None)
    assert unresolved == []
    unlinked = session.scalar(
        select(func.count()).select_from(CloudOffer).where(CloudOffer.accelerator_id.is_(None))
    )
    assert unlinked == 0
    assert session.scalar(select(func.count()).select_from(CloudOffer)) > 1000


def test_every_epoch_hardware_row_is_an_accelerator(session: Session) -> None:
    with EPOCH_FILE.open(encoding="utf-8", newline="") as handle:
        names = [row["Hardware name"] for row in csv.DictReader(handle)]
    assert len(names) > 150
    unresolved = [name for name in names if resolve_accelerator_id(session, name) is None]
    assert unresolved == []
    assert session.scalar(select(func.count()).select_from(Accelerator)) >= len(set(names)) * 0.8


def test_api_prices_match_litellm(session: Session) -> None:
    raw = json.loads(LITELLM_FILE.read_text(encoding="utf-8"))
    # `sample_spec` documents the fields and `fallback_generalizations` holds routing rules: not models
    entries = {k: v for k, v in raw.items() if k != "sample_spec" and "rules" not in v}
    prices = {p.model_id: p for p in session.scalars(select(ApiPrice))}
    assert set(prices) == set(entries)
    for model_id in ("gpt-4o", "claude-sonnet-4-5", "gemini/gemini-2.5-pro"):
        entry, price = entries[model_id], prices[model_id]
        assert price.input_usd_per_million_tokens == Decimal(str(entry["input_cost_per_token"])) * 1_000_000
        assert price.output_usd_per_million_tokens == Decimal(str(entry["output_cost_per_token"])) * 1_000_000
        assert price.context_window_tokens == entry.get("max_input_tokens")
    zero_in_source = [k for k, v in entries.items() if v.get("input_cost_per_token") == 0]
    assert zero_in_source, "the source has free/unknown entries listed as 0"
    for model_id in zero_in_source:
        assert prices[model_id].input_usd_per_million_tokens is None
        assert prices[model_id].suspect_reason


def test_seeding_again_writes_nothing(seeded_engine: Engine) -> None:
    assert seed_if_empty(seeded_engine) is None


def test_a_failed_seed_leaves_nothing_behind(backend: str, empty_engine_factory, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import shutil

    from wheretorun.db import make_session_factory, upgrade_to_head
    from wheretorun.pricing.loader import DATA_DIR, seed_catalog

    broken = tmp_path / "data"
    shutil.copytree(DATA_DIR, broken)
    (broken / "sources" / "litellm" / "model_prices_and_context_window.json").write_text(
        "{ not json", encoding="utf-8"
    )
    engine = empty_engine_factory(backend)
    upgrade_to_head(engine)
    with pytest.raises(json.JSONDecodeError), make_session_factory(engine).begin() as session:  # noqa: PT012
        seed_catalog(session, broken)
    with make_session_factory(engine)() as session:
        assert session.scalar(select(func.count()).select_from(CatalogVersion)) == 0
        assert session.scalar(select(func.count()).select_from(CloudOffer)) == 0
        assert session.scalar(select(func.count()).select_from(Accelerator)) == 0
