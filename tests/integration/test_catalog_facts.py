"""Catalog facts an expert would sign, on the real seeded catalog (SQLite and PostgreSQL):
commitment terms instead of a blanket discount, suspect prices kept and explained, and purchase
prices that say what they buy."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from tests.import_support import TEST_ACTOR
from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.catalog import CatalogSnapshot
from wheretorun.engine.cluster_network import CLUSTER_NETWORKS
from wheretorun.engine.costs.owned import server_capex_usd
from wheretorun.engine.recommend import recommend
from wheretorun.engine.recommendation import Recommendation, RejectReason
from wheretorun.engine.workload import Constraints, InferenceWorkload, OptionKind, TrainingWorkload
from wheretorun.pricing.imports import ImportSpec, import_content
from wheretorun.pricing.models import ApiPrice, CloudOffer, CommitmentTerm, HardwarePrice
from wheretorun.pricing.snapshot import build_snapshot

# A steady 70B service: ~5 requests/s all day, no peaks (the reserved-H200 case).
STEADY_70B = InferenceWorkload(
    models=("llama-3.3-70b",),
    requests_per_day=400_000,
    input_tokens=1000,
    output_tokens=250,
    peak_to_average=1.0,
)


@pytest.fixture
def snapshot(session: Session) -> CatalogSnapshot:
    return build_snapshot(session)


def _current(session: Session, model: type, *conditions: object) -> list:  # type: ignore[type-arg]
    return list(session.scalars(select(model).where(model.effective_to.is_(None), *conditions)))


def _rejected(recommendation: Recommendation, reason: RejectReason) -> tuple[int, tuple[str, ...]]:
    for group in recommendation.rejected:
        if group.reason == reason:
            return group.count, group.examples
    return 0, ()


# --- commitment terms --------------------------------------------------------------------------------


def test_commitment_terms_are_seeded_with_one_citation_each(session: Session) -> None:
    terms = _current(session, CommitmentTerm)
    assert {t.provider for t in terms} == {"aws", "gcp", "azure"}
    assert all(t.source and t.term_months in (12, 36) for t in terms)
    p4d = [t for t in terms if t.instance_family == "p4d" and t.term_months == 36]
    # AWS p4d.24xlarge per GPU-hour: $4.10 on demand, $1.45 on a 3-year commitment
    assert [t.discount_fraction for t in p4d] == [Decimal("0.6463")]
    assert "aws.amazon.com/ec2/instance-types/p4" in p4d[0].source


def test_offers_carry_the_most_specific_term_and_marketplaces_none(snapshot: CatalogSnapshot) -> None:
    by_type = {(o.provider, o.instance_type): o for o in snapshot.cloud_offers}
    p4d = by_type[("aws", "p4d.24xlarge")].commitment(36)
    assert p4d is not None
    assert p4d.instance_family == "p4d"
    p5 = by_type[("aws", "p5.48xlarge")].commitment(36)
    assert p5 is not None
    assert (p5.instance_family, p5.discount_fraction) == ("", Decimal("0.64"))
    for provider in ("mithril", "vast", "runpod", "lambda", "nebius", "hyperstack"):
        assert all(not o.commitments for o in snapshot.cloud_offers if o.provider == provider), provider


def test_the_reserved_mithril_h200_no_longer_wins_a_steady_70b_service(snapshot: CatalogSnapshot) -> None:
    mithril = [
        o for o in snapshot.suspect_cloud_offers if o.provider == "mithril" and o.instance_type == "h200.8x"
    ]
    assert mithril
    assert "bid floor" in (mithril[0].suspect_reason or "")
    result = recommend(STEADY_70B, Constraints(), Assumptions(), snapshot)
    reserved = [o for o in result.options if (o.setup.pricing_mode or "").startswith("reserved")]
    assert all(o.setup.provider in ("aws", "gcp", "azure") for o in reserved), [o.label for o in reserved]
    assert all("mithril" not in o.label for o in result.options)
    for option in result.options:
        if option.option == OptionKind.CLOUD:
            # the effective price per accelerator-hour is stated, with its source
            assert option.usd_per_accelerator_hour is not None
            assert option.usd_per_accelerator_hour > 0
            assert option.price_source
        if (option.setup.pricing_mode or "").startswith("reserved"):
            assert "commitment" in (option.price_source or ""), option.price_source


def test_a_users_discount_is_used_and_labelled_as_theirs(snapshot: CatalogSnapshot) -> None:
    mine = Assumptions(reserved_discounts_by_provider=(("lambda", 0.2, 0.35),))
    result = recommend(STEADY_70B, Constraints(allowed_providers=("lambda",)), mine, snapshot)
    reserved = [o for o in result.options if o.setup.pricing_mode == "reserved_3y"]
    assert reserved, [o.label for o in result.options]
    assert "the user's 35%" in (reserved[0].price_source or "")
    assert any("user's own discount" in risk for risk in reserved[0].risks)
    without = recommend(STEADY_70B, Constraints(allowed_providers=("lambda",)), Assumptions(), snapshot)
    assert not [o for o in without.options if (o.setup.pricing_mode or "").startswith("reserved")]
    count, _ = _rejected(without, RejectReason.UNPRICED)
    assert count > 0  # the reserved rows of a provider without a term


def test_commitment_terms_import_through_the_canonical_format_with_a_diff(
    session: Session, snapshot: CatalogSnapshot
) -> None:
    quote = (
        "kind,key,usd_per_unit,usd_per_kwh,source,accelerator,instance_family,term_months,"
        "discount_fraction,usd_per_accelerator_hour\n"
        'commitment,lambda,,,"test quote, 3-year reserved H100",H100-SXM,,36,,2.10\n'
    )
    spec = ImportSpec("canonical", dry_run=True)
    dry = import_content(session, spec, quote.encode(), "quote.csv", TEST_ACTOR, lock_timeout_s=10)
    assert dry.diff["by_table"] == {
        "commitment_terms": {"added": 1, "removed": 0, "changed": 0, "unchanged": 0}
    }
    applied = import_content(
        session, ImportSpec("canonical"), quote.encode(), "quote.csv", TEST_ACTOR, lock_timeout_s=10
    )
    assert applied.status == "applied"
    later = build_snapshot(session, dt.datetime.now(dt.UTC) + dt.timedelta(seconds=1))
    lambda_h100 = [o for o in later.cloud_offers if o.provider == "lambda" and o.accelerator_id == "h100-sxm"]
    assert lambda_h100
    assert all(o.commitment(36) is not None for o in lambda_h100)
    assert all(o.commitment(12) is None for o in lambda_h100)
    result = recommend(STEADY_70B, Constraints(allowed_providers=("lambda",)), Assumptions(), later)
    reserved = [o for o in result.options if o.setup.pricing_mode == "reserved_3y"]
    assert reserved
    assert reserved[0].usd_per_accelerator_hour == Decimal("2.1000")
    assert "test quote" in (reserved[0].price_source or "")


def test_the_example_commitment_file_imports(session: Session) -> None:
    text = (Path(__file__).resolve().parents[2] / "examples" / "prices" / "commitments.csv").read_bytes()
    dry = import_content(
        session, ImportSpec("canonical", dry_run=True), text, "c.csv", TEST_ACTOR, lock_timeout_s=10
    )
    assert dry.diff["by_table"]["commitment_terms"]["added"] == 2


# --- suspect prices ----------------------------------------------------------------------------------


def test_the_405b_outlier_is_kept_flagged_and_left_out(session: Session, snapshot: CatalogSnapshot) -> None:
    row = _current(
        session, ApiPrice, ApiPrice.model_id == "hyperbolic/meta-llama/Meta-Llama-3.1-405B-Instruct"
    )
    assert len(row) == 1
    assert "medians of llama-3.1-405b" in (row[0].suspect_reason or "")
    workload = InferenceWorkload(
        models=("llama-3.1-405b",), requests_per_day=20_000, input_tokens=1000, output_tokens=250
    )
    hosted_only = Constraints(allowed_options=(OptionKind.HOSTED_API,))
    result = recommend(workload, hosted_only, Assumptions(), snapshot)
    best = result.options[0]
    assert best.setup.provider != "hyperbolic"
    count, examples = _rejected(result, RejectReason.SUSPECT_PRICE)
    assert count >= 1
    assert any("Meta-Llama-3.1-405B" in e for e in examples)

    asked = recommend(
        workload,
        Constraints(allowed_options=(OptionKind.HOSTED_API,), include_suspect_prices=True),
        Assumptions(),
        snapshot,
    )
    assert asked.options[0].setup.provider == "hyperbolic"
    assert any("suspect price" in risk for risk in asked.options[0].risks)
    assert asked.options[0].total_usd < best.total_usd


def test_a_shut_down_provider_is_suspect(session: Session) -> None:
    anyscale = _current(session, ApiPrice, ApiPrice.provider == "anyscale")
    assert anyscale
    assert all("has shut down" in (p.suspect_reason or "") for p in anyscale)


def test_models_past_their_deprecation_date_are_suspect_at_that_moment(session: Session) -> None:
    deprecated = _current(
        session, ApiPrice, ApiPrice.deprecation_date.is_not(None), ApiPrice.suspect_reason.is_(None)
    )
    row = min(deprecated, key=lambda p: p.deprecation_date)
    before = dt.datetime.combine(row.deprecation_date, dt.time(), dt.UTC) - dt.timedelta(days=1)
    after = dt.datetime.combine(row.deprecation_date, dt.time(), dt.UTC) + dt.timedelta(days=1)
    earlier = build_snapshot(session, max(before, row.effective_from))
    if row.effective_from <= before:
        assert row.id in {p.id for p in earlier.api_prices}
    assert row.id in {
        p.id for p in build_snapshot(session, max(after, row.effective_from)).suspect_api_prices
    }


def test_cloud_outliers_are_flagged_against_the_other_providers(session: Session) -> None:
    flagged = _current(session, CloudOffer, CloudOffer.suspect_reason.like("%cross-provider median%"))
    # rows below the fixed floors (Mithril's $0.01-0.08 placeholders) say so too; these two are
    # caught only by the comparison with the other providers
    assert {
        (o.provider, o.instance_type)
        for o in flagged
        if "GPU-hour is below the $" not in (o.suspect_reason or "")
    } == {
        ("mithril", "h100-80gb.sxm.8x"),
        ("mithril", "h200.8x"),
    }


# --- what a purchase price buys -------------------------------------------------------------------


def test_the_h100_price_is_a_dgx_and_gets_no_server_overhead(
    session: Session, snapshot: CatalogSnapshot
) -> None:
    (price,) = _current(session, HardwarePrice, HardwarePrice.accelerator_id == "h100-sxm")
    assert (price.basis, price.accelerators_per_unit, price.usd_per_unit) == (
        "system",
        8,
        Decimal("268800.00"),
    )
    engine_price = snapshot.hardware_prices["h100-sxm"]
    assert server_capex_usd(engine_price, 8, Assumptions()) == pytest.approx(268_800)
    # a chip price still gets the server on top
    assert snapshot.hardware_prices["l40s"].basis == "chip"
    assert server_capex_usd(snapshot.hardware_prices["l40s"], 4, Assumptions()) == pytest.approx(
        4 * 10_000 * 1.64
    )


def test_an_owned_h100_training_cluster_costs_what_an_expert_expects_per_gpu(
    snapshot: CatalogSnapshot,
) -> None:
    workload = TrainingWorkload(
        model="llama-3.1-8b", method="full", tokens=200e9, deadline_hours=24 * 30, runs_per_year=4
    )
    only = Constraints(allowed_options=(OptionKind.OWNED,), allowed_accelerators=("h100-sxm",))
    result = recommend(workload, only, Assumptions(), snapshot)
    assert result.options, result.rejected
    owned = result.options[0]
    per_gpu = owned.capex_usd / owned.setup.accelerator_count  # type: ignore[operator]
    assert Decimal(30_000) <= per_gpu <= Decimal(50_000), per_gpu
    assert owned.usd_per_accelerator_hour is not None
    assert owned.price_source


def test_newly_priced_accelerators_cite_their_source(snapshot: CatalogSnapshot) -> None:
    for accelerator_id in ("a100-sxm-80gb", "a100-pcie", "b200"):
        price = snapshot.hardware_prices[accelerator_id]
        assert price.source
        assert price.usd_per_unit > 0
    assert snapshot.hardware_prices["a100-sxm-80gb"].includes_server
    for unpriced in ("h100-nvl", "h200-nvl", "a100-pcie-80gb"):
        assert unpriced not in snapshot.hardware_prices


def test_every_cluster_network_on_record_names_an_instance_type_of_the_catalog(session: Session) -> None:
    """The network table is keyed by (provider, instance type): a key the seeded catalog does not
    hold would never apply (a renamed instance type would silently lose its network)."""
    rows = session.execute(select(CloudOffer.provider, CloudOffer.instance_type))
    offered = {(provider, instance_type) for provider, instance_type in rows}
    assert len(CLUSTER_NETWORKS) >= 14
    missing = [key for key in CLUSTER_NETWORKS if key not in offered]
    assert missing == []
