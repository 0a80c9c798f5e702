"""Hosted APIs: tokens x price, cached input, batch tiers, and no free tokens."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

import pytest

from tests.unit.recommend_catalog import GPT_4O, TOGETHER_70B, VERTEX_8B_UNPRICED
from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.caches import clear_caches
from wheretorun.engine.catalog import ApiPriceOffer
from wheretorun.engine.costs import hosted
from wheretorun.engine.costs.candidate import FIXED_STAFF_LINES, Line, lines_total
from wheretorun.engine.costs.demand import BatchDemand, ServingDemand
from wheretorun.engine.recommendation import RejectReason, Setup
from wheretorun.engine.rules import first_failing, missing_price
from wheretorun.engine.rules.first_failing import hosted_row
from wheretorun.engine.rules.rejection import Rejection
from wheretorun.engine.workload import BatchWorkload, Constraints, InferenceWorkload

ASSUMPTIONS = Assumptions(hosted_staff_usd_per_month=0.0, horizon_months=12)


def _demand(cached_input_tokens: int = 0) -> ServingDemand:
    workload = InferenceWorkload(
        models=("gpt-4o",),
        requests_per_day=1000.0,
        input_tokens=1000,
        output_tokens=200,
        cached_input_tokens=cached_input_tokens,
    )
    return ServingDemand.from_workload(workload, ASSUMPTIONS.horizon_months, ASSUMPTIONS.hours_per_month)


def test_serving_cost_is_tokens_times_price() -> None:
    plan = hosted.serving_plan(GPT_4O, "gpt-4o", _demand(), ASSUMPTIONS)
    requests = 1000 * 730 / 24 * 12
    assert plan.total_usd == pytest.approx(requests * (1000 * 2.50 + 200 * 10.00) / 1e6)
    assert plan.usd_per_million_tokens == pytest.approx(plan.total_usd / (requests * 1200) * 1e6)


def test_cached_input_uses_the_cached_price_or_else_the_input_price() -> None:
    cached = hosted.serving_plan(GPT_4O, "gpt-4o", _demand(cached_input_tokens=600), ASSUMPTIONS)
    requests = 1000 * 730 / 24 * 12
    assert cached.total_usd == pytest.approx(requests * (400 * 2.50 + 600 * 1.25 + 200 * 10.00) / 1e6)
    no_cache_price = hosted.serving_plan(
        TOGETHER_70B, "llama-3.3-70b", _demand(cached_input_tokens=600), ASSUMPTIONS
    )
    assert no_cache_price.total_usd == pytest.approx(requests * 1200 * 1.04 / 1e6)
    assert "input price" in no_cache_price.lines[1].note


def test_staff_is_charged_every_month() -> None:
    plan = hosted.serving_plan(GPT_4O, "gpt-4o", _demand(), Assumptions(horizon_months=12))
    assert plan.line_usd("operations staff") == pytest.approx(900.0 * 12)


@pytest.mark.parametrize(("deadline", "batch"), [(48.0, True), (24.0, True), (12.0, False)])
def test_the_batch_tier_needs_a_deadline_of_its_completion_window(deadline: float, batch: bool) -> None:
    demand = BatchDemand.from_workload(
        BatchWorkload(
            models=("gpt-4o",), input_tokens_total=1e9, output_tokens_total=1e8, deadline_hours=deadline
        )
    )
    plan = hosted.batch_plan(GPT_4O, "gpt-4o", demand, ASSUMPTIONS)
    prices = (1.25, 5.00) if batch else (2.50, 10.00)
    assert plan.total_usd == pytest.approx((1e9 * prices[0] + 1e8 * prices[1]) / 1e6)
    assert (plan.setup.pricing_mode == "api_batch") is batch


def test_a_missing_price_is_rejected_as_unpriced_never_free() -> None:
    assert missing_price.hosted_tokens(VERTEX_8B_UNPRICED) == Rejection(
        RejectReason.UNPRICED, "no input or output token price"
    )
    only_output = dataclasses.replace(GPT_4O, output_usd_per_million_tokens=None)
    rejection = hosted_row(only_output, 1200, Constraints())
    assert rejection is not None
    assert rejection.reason == RejectReason.UNPRICED


def test_a_request_longer_than_the_context_window_is_rejected() -> None:
    rejection = hosted_row(GPT_4O, 200_000, Constraints())
    assert rejection is not None
    assert rejection.reason == RejectReason.EXCEEDS_CONTEXT_WINDOW


@pytest.mark.parametrize("price", [GPT_4O, TOGETHER_70B], ids=["cached price", "no cached price"])
@pytest.mark.parametrize("cached_input_tokens", [0, 600])
@pytest.mark.parametrize("staff_usd", [0.0, 900.0])
def test_the_total_without_the_lines_is_the_lines_total_to_the_bit(
    price: ApiPriceOffer, cached_input_tokens: int, staff_usd: float
) -> None:
    """Pricing, the break-even search and the lead-time bridge read `serving_total`; the plan
    shown adds its lines. They must agree to the last bit (a ranking compares them)."""
    assumptions = Assumptions(hosted_staff_usd_per_month=staff_usd, horizon_months=12)
    demand = _demand(cached_input_tokens)
    plan = hosted.serving_plan(price, "m", demand, assumptions)
    assert plan.repriced_total_usd is not None
    for multiplier in (1 / 64, 0.3, 1.0, 7.0, 64.0):
        scaled = demand.scaled(multiplier)
        total = lines_total(hosted.serving_lines(price, scaled, assumptions))
        assert hosted.serving_total(price, scaled, assumptions).hex() == total.hex()
        repriced = plan.reprice(multiplier) if plan.reprice else None
        assert repriced is not None
        assert plan.repriced_total_usd(multiplier) == repriced.total_usd
    names = [line.name for line in plan.lines]
    assert ("cached input tokens" in names) is (cached_input_tokens > 0)


@pytest.mark.parametrize("cached_input_tokens", [0, 600])
@pytest.mark.parametrize("staff_usd", [0.0, 900.0])
def test_rows_priced_together_are_each_row_priced_alone(cached_input_tokens: int, staff_usd: float) -> None:
    """A request prices its rows together (the staff once); each must be the row's own plan, to the
    bit, and write its own plan (not the last row's)."""
    assumptions = Assumptions(hosted_staff_usd_per_month=staff_usd, horizon_months=12)
    demand = _demand(cached_input_tokens)
    rows = [(GPT_4O, "gpt-4o"), (TOGETHER_70B, "llama-3.3-70b"), (GPT_4O, "gpt-4o-mini")]
    priced = hosted.priced_serving_plans(rows, demand, assumptions)
    assert len(priced) == len(rows)
    for plan, (price, model_id) in zip(priced, rows, strict=True):
        alone = hosted.serving_plan(price, model_id, demand, assumptions)
        assert plan.total_usd.hex() == alone.total_usd.hex()
        assert plan.total_usd.hex() == hosted.serving_total(price, demand, assumptions).hex()
        assert (plan.label, plan.setup, plan.months, plan.capex_usd) == (
            alone.label,
            alone.setup,
            alone.months,
            alone.capex_usd,
        )
        assert plan.written() == alone
    assert hosted.priced_serving_plans([], demand, assumptions) == []


def test_what_a_row_gives_whatever_the_volume_is_remembered_for_that_row_only() -> None:
    demand = _demand()
    first = hosted.priced_serving_plan(GPT_4O, "gpt-4o", demand, ASSUMPTIONS)
    again = hosted.priced_serving_plan(GPT_4O, "gpt-4o", demand.scaled(2.0), ASSUMPTIONS)
    assert first.setup is again.setup
    assert first.setup == Setup.for_hosted("gpt-4o", GPT_4O, "api")
    assert again.total_usd == pytest.approx(2 * first.total_usd)
    other_row = dataclasses.replace(GPT_4O, provider="elsewhere", output_usd_per_million_tokens=Decimal("20"))
    other = hosted.priced_serving_plan(other_row, "gpt-4o", demand, ASSUMPTIONS)
    assert other.setup == Setup.for_hosted("gpt-4o", other_row, "api")
    assert other.total_usd == hosted.serving_plan(other_row, "gpt-4o", demand, ASSUMPTIONS).total_usd
    assert other.total_usd > first.total_usd
    assert (
        hosted.priced_serving_plan(GPT_4O, "gpt-4o-mini", demand, ASSUMPTIONS).setup.model_id == "gpt-4o-mini"
    )
    clear_caches()  # the rows' token prices (hosted) and setups (Setup.for_hosted)
    afresh = hosted.priced_serving_plan(GPT_4O, "gpt-4o", demand, ASSUMPTIONS)
    assert afresh.setup is not first.setup
    assert afresh.total_usd == first.total_usd


@pytest.mark.parametrize(
    "limits",
    [
        Constraints(),
        Constraints(on_premises_only=True),
        Constraints(allowed_regions=("eu-west-1",)),
        Constraints(excluded_providers=("openai",)),
    ],
    ids=["none", "on premises", "regions", "excluded provider"],
)
@pytest.mark.parametrize("context_tokens", [1200, 200_000])
def test_a_row_is_the_request_wide_rules_then_the_rows_own(limits: Constraints, context_tokens: int) -> None:
    """`_hosted` asks `hosted_api` once a request and `hosted_price` once a row: the same first
    failing rule as `hosted_row`."""
    whole = first_failing.hosted_api(limits) or first_failing.hosted_price(GPT_4O, context_tokens, limits)
    assert whole == hosted_row(GPT_4O, context_tokens, limits)


def test_the_marginal_cost_takes_the_fixed_lines_off_to_the_bit() -> None:
    lines = (
        Line("tokens", 1234.5678901),
        Line("operations staff", 0.1),
        Line("upkeep", 0.2),
        Line("operations staff", 0.7),
    )
    plan = dataclasses.replace(hosted.serving_plan(GPT_4O, "gpt-4o", _demand(), ASSUMPTIONS), lines=lines)
    expected = plan.total_usd - sum(plan.line_usd(name) for name in FIXED_STAFF_LINES)
    assert plan.marginal_usd.hex() == expected.hex()


@pytest.mark.parametrize(
    ("missing", "detail"),
    [
        ({"input_usd_per_million_tokens": None}, "no input token price"),
        ({"output_usd_per_million_tokens": None}, "no output token price"),
        (
            {"input_usd_per_million_tokens": None, "output_usd_per_million_tokens": None},
            "no input or output token price",
        ),
    ],
)
def test_a_missing_token_price_names_what_is_missing(missing: dict[str, None], detail: str) -> None:
    assert missing_price.hosted_tokens(dataclasses.replace(GPT_4O, **missing)) == Rejection(
        RejectReason.UNPRICED, detail
    )
    assert missing_price.hosted_tokens(GPT_4O) is None
