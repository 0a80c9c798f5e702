"""The plausibility rules of `wheretorun.pricing.plausibility`, on small hand-made record sets."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wheretorun.errors import MalformedFile
from wheretorun.pricing.imports.canonical import read_canonical_prices
from wheretorun.pricing.plausibility import (
    CLOUD_OUTLIER_FRACTION,
    MIN_PROVIDERS,
    SPOT_EQUALS_ON_DEMAND_FRACTION,
    TOKEN_OUTLIER_FRACTION,
    flag_cloud_outliers,
    flag_token_outliers,
)
from wheretorun.pricing.records import ApiPriceRecord, CloudOfferRecord


def offer(
    provider: str, per_gpu: str, spot: str | None = None, accelerator: str = "h200-sxm"
) -> CloudOfferRecord:
    return CloudOfferRecord(
        provider=provider,
        instance_type=f"{provider}-8x",
        region="r",
        accelerator_name="H200",
        accelerator_id=accelerator,
        accelerator_count=Decimal(8),
        vcpus=None,
        memory_gib=None,
        on_demand_usd_per_hour=Decimal(per_gpu) * 8,
        spot_usd_per_hour=None if spot is None else Decimal(spot) * 8,
        zone_count=1,
        accelerator_only=False,
        suspect_reason=None,
        source="test",
    )


def hosted(
    provider: str, input_price: str, output_price: str, model: str = "llama-3.1-405b"
) -> ApiPriceRecord:
    return ApiPriceRecord(
        provider=provider,
        model_id=f"{provider}/{model}",
        mode="chat",
        input_usd_per_million_tokens=Decimal(input_price),
        cached_input_usd_per_million_tokens=None,
        cache_write_usd_per_million_tokens=None,
        output_usd_per_million_tokens=Decimal(output_price),
        batch_input_usd_per_million_tokens=None,
        batch_output_usd_per_million_tokens=None,
        context_window_tokens=None,
        max_output_tokens=None,
        deprecation_date=None,
        source="test",
        catalog_model_id=model,
    )


# The shipped H200 SXM on-demand medians per provider (USD per GPU-hour), median 3.50.
H200 = [
    ("vast", "2.47"),
    ("verda", "2.59"),
    ("seeweb", "2.60"),
    ("nebius", "3.50"),
    ("runpod", "3.59"),
    ("jarvislabs", "3.99"),
    ("daytona", "6.56"),
    ("aws", "9.02"),
]


def test_a_marketplace_bid_floor_is_flagged_and_genuine_cheap_offers_are_not() -> None:
    records = [offer(p, price) for p, price in H200] + [offer("mithril", "1.00", spot="1.00")]
    flagged = {r.provider: r.suspect_reason for r in flag_cloud_outliers(records)}
    assert flagged["mithril"] is not None
    assert "bid floor" in flagged["mithril"]
    assert all(flagged[p] is None for p, _ in H200)


def test_a_price_far_below_the_median_is_flagged_even_with_a_spot_discount() -> None:
    records = [offer(p, price) for p, price in H200] + [offer("cheap", "0.80", spot="0.40")]
    (flagged,) = [r for r in flag_cloud_outliers(records) if r.provider == "cheap"]
    assert flagged.suspect_reason is not None
    assert "below 25%" in flagged.suspect_reason
    # 1.00 with a real spot discount is 29% of the median: cheap, not suspect
    (kept,) = [
        r
        for r in flag_cloud_outliers([*records[:-1], offer("cheap", "1.00", spot="0.5")])
        if r.provider == "cheap"
    ]
    assert kept.suspect_reason is None


def test_too_few_providers_make_no_distribution() -> None:
    records = [offer("a", "3.00"), offer("b", "0.10")]
    assert len(records) < MIN_PROVIDERS
    assert all(r.suspect_reason is None for r in flag_cloud_outliers(records))


def test_other_providers_rows_shape_the_distribution_of_an_import() -> None:
    others = [(p, "h200-sxm", float(price)) for p, price in H200]
    (flagged,) = flag_cloud_outliers([offer("mithril", "1.00", spot="1.00")], others)
    assert flagged.suspect_reason is not None


@given(per_gpu=st.decimals(min_value=Decimal("0.05"), max_value=Decimal("20"), places=2))
def test_the_cloud_rule_is_exactly_its_threshold(per_gpu: Decimal) -> None:
    records = [offer(p, price) for p, price in H200] + [offer("x", str(per_gpu))]
    (result,) = [r for r in flag_cloud_outliers(records) if r.provider == "x"]
    median = 3.50  # one more provider than H200's 8 moves the median between 3.50 and 3.59 at most
    if float(per_gpu) < CLOUD_OUTLIER_FRACTION * median:
        assert result.suspect_reason is not None
    if float(per_gpu) >= CLOUD_OUTLIER_FRACTION * 3.59:
        assert result.suspect_reason is None
    assert SPOT_EQUALS_ON_DEMAND_FRACTION > CLOUD_OUTLIER_FRACTION


def test_the_405b_hosted_outlier_is_flagged_and_cheap_genuine_providers_are_not() -> None:
    # LiteLLM 1.110.2 prices of Llama 3.1 405B (input / output per million tokens)
    records = [
        hosted("together_ai", "3.50", "3.50"),
        hosted("fireworks_ai", "3.00", "3.00"),
        hosted("bedrock", "5.32", "16.00"),
        hosted("vertex_ai", "5.00", "16.00"),
        hosted("nebius", "1.00", "3.00"),
        hosted("hyperbolic", "0.12", "0.30"),
    ]
    flagged = {r.provider: r.suspect_reason for r in flag_token_outliers(records)}
    assert flagged["hyperbolic"] is not None
    assert f"{TOKEN_OUTLIER_FRACTION:.0%}" in flagged["hyperbolic"]
    assert [p for p, reason in flagged.items() if reason] == ["hyperbolic"]


def test_a_shut_down_provider_is_flagged_with_its_citation() -> None:
    (anyscale,) = flag_token_outliers([hosted("anyscale", "1.00", "1.00", model="llama-2-70b")])
    assert anyscale.suspect_reason is not None
    assert "2024-08-01" in anyscale.suspect_reason


def test_commitment_rows_read_and_bad_ones_name_the_column() -> None:
    header = (
        "kind,key,usd_per_unit,usd_per_kwh,source,accelerator,instance_family,term_months,"
        "discount_fraction,usd_per_accelerator_hour\n"
    )
    prices = read_canonical_prices(
        header + "commitment,AWS,,,cited,h100-sxm,p5,36,0.64,\ncommitment,lambda,,,quote,,,12,,2.5\n",
        {"h100-sxm": "h100-sxm"}.get,
    )
    assert prices.kinds == {"commitment"}
    aws, lam = prices.commitments
    assert (aws.provider, aws.accelerator_id, aws.instance_family, aws.term_months) == (
        "aws",
        "h100-sxm",
        "p5",
        36,
    )
    assert (lam.discount_fraction, lam.usd_per_accelerator_hour) == (None, Decimal("2.5"))
    for bad_row, column in (
        ("commitment,aws,,,cited,,,36,0.64,2.0", "discount_fraction"),  # both
        ("commitment,aws,,,cited,,,36,1.2,", "discount_fraction"),
        ("commitment,aws,,,cited,,,0,0.5,", "term_months"),
        ("commitment,aws,,,cited,nope,,36,0.5,", "accelerator"),
        ("commitment,aws,100,,cited,,,36,0.5,", "usd_per_unit"),
    ):
        with pytest.raises(MalformedFile) as caught:
            read_canonical_prices(header + bad_row + "\n", {"h100-sxm": "h100-sxm"}.get)
        assert column in {p.column for p in caught.value.problems}, (bad_row, caught.value.problems)


def test_a_hardware_row_says_what_it_buys() -> None:
    header = "kind,key,usd_per_unit,usd_per_kwh,source,basis,accelerators_per_unit\n"
    prices = read_canonical_prices(
        header + "hardware,h100-sxm,268800,,DGX,system,8\n", {"h100-sxm": "h100-sxm"}.get
    )
    assert (prices.hardware[0].basis, prices.hardware[0].accelerators_per_unit) == ("system", 8)
    with pytest.raises(MalformedFile):
        read_canonical_prices(header + "hardware,h100-sxm,30000,,chip,chip,8\n", {"h100-sxm": "h100-sxm"}.get)
    with pytest.raises(MalformedFile):
        read_canonical_prices(header + "hardware,h100-sxm,30000,,x,rack,1\n", {"h100-sxm": "h100-sxm"}.get)
