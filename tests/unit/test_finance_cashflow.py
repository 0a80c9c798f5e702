"""Monthly cash flows: each kind of line, owned capacity with lead time, depreciation and residual
value, totals and cost per million tokens — checked against figures worked out by hand."""

from __future__ import annotations

import dataclasses

import pytest

from wheretorun.engine.finance import (
    HOURS_PER_MONTH,
    CapexItem,
    CostCategory,
    CostKind,
    FinanceAssumptions,
    InstanceLine,
    OpexLine,
    OwnedCapacity,
    Plan,
    PlanResult,
    ResidualValue,
    Scenario,
    Traffic,
    UnitOpexLine,
    UsageLine,
    evaluate,
    monthly_rate,
)


def evaluate_one(
    plan: Plan,
    traffic: Traffic,
    horizon: int,
    rate: float = 0.0,
    residual: ResidualValue = ResidualValue.BOOK_VALUE,
) -> PlanResult:
    assumptions = FinanceAssumptions(
        horizon_months=horizon, discount_rate_annual=rate, residual_value=residual
    )
    return evaluate(Scenario(plans=(plan,), traffic=traffic, assumptions=assumptions)).plans[0]


def monthly(result: PlanResult, attribute: str) -> list[float]:
    return [getattr(month, attribute) for month in result.months]


def test_usage_line_follows_growing_traffic() -> None:
    result = evaluate_one(
        Plan("api", usage=(UsageLine("tokens", 2.0),)), Traffic(tokens_per_month=1e9, growth_per_month=0.1), 3
    )
    assert monthly(result, "tokens") == pytest.approx([1e9, 1.1e9, 1.21e9])
    assert monthly(result, "total_usd") == pytest.approx([2000.0, 2200.0, 2420.0])
    assert result.total_usd == pytest.approx(6620.0)
    assert result.usd_per_million_tokens == pytest.approx(2.0)
    assert monthly(result, "usd_per_million_tokens") == pytest.approx([2.0, 2.0, 2.0])


def test_units_per_million_tokens_scale_the_units() -> None:
    # 0.5 instance-hours per million tokens at $4/hour = $2 per million tokens
    line = UsageLine("gpu hours", usd_per_unit=4.0, unit="instance-hours", units_per_million_tokens=0.5)
    result = evaluate_one(Plan("elastic", usage=(line,)), Traffic(tokens_per_month=3e9), 2)
    assert result.total_usd == pytest.approx(2 * 3000 * 2.0)


def test_explicit_series_is_used_month_by_month() -> None:
    result = evaluate_one(
        Plan("api", usage=(UsageLine("tokens", 1.0),)), Traffic(monthly_tokens=(1e6, 0.0, 5e6, 9e9)), 3
    )
    assert monthly(result, "total_usd") == pytest.approx([1.0, 0.0, 5.0])
    assert result.months[1].usd_per_million_tokens is None


def test_opex_window_and_escalation() -> None:
    line = OpexLine("support", 100.0, start_month=3, end_month=27, annual_escalation=0.1)
    result = evaluate_one(Plan("fixed", opex=(line,)), Traffic(), 30)
    paid = monthly(result, "opex_usd")
    assert paid[:2] == [0.0, 0.0]
    assert paid[2:14] == pytest.approx([100.0] * 12)  # months 3-14: the line's first year
    assert paid[14:26] == pytest.approx([110.0] * 12)  # months 15-26: first anniversary
    assert paid[26] == pytest.approx(121.0)  # month 27
    assert paid[27:] == [0.0, 0.0, 0.0]


def test_whole_instances_with_minimum_and_spot() -> None:
    line = InstanceLine(
        "h100",
        usd_per_instance_hour=2.0,
        tokens_per_month_per_instance=100e6,
        utilisation=0.5,
        minimum_instances=1,
        fallback_usd_per_instance_hour=5.0,
        spot_availability=0.8,
    )
    # 250M tokens at 50M a month each: 5 instances; no traffic: the minimum of 1
    result = evaluate_one(Plan("cloud", instances=(line,)), Traffic(monthly_tokens=(250e6, 0.0)), 2)
    usd_per_hour = 0.8 * 2.0 + 0.2 * 5.0
    assert monthly(result, "opex_usd") == pytest.approx(
        [5 * HOURS_PER_MONTH * usd_per_hour, 1 * HOURS_PER_MONTH * usd_per_hour]
    )


def test_whole_instances_ignore_float_noise() -> None:
    # 4.41e9 / (7e8 x 0.7) is 9.000000000000002 in floating point: still 9 instances
    line = InstanceLine("h100", 1.0, tokens_per_month_per_instance=7e8, utilisation=0.7, hours_per_month=1.0)
    result = evaluate_one(Plan("cloud", instances=(line,)), Traffic(tokens_per_month=4.41e9), 1)
    assert result.total_usd == pytest.approx(9.0)


def test_capex_depreciation_and_book_value_residual() -> None:
    item = CapexItem("server", 1200.0, month=1, depreciation_years=1, residual_fraction=0.25)
    result = evaluate_one(Plan("owned", capex=(item,)), Traffic(), 24)
    assert monthly(result, "depreciation_usd")[:12] == pytest.approx([75.0] * 12)
    assert monthly(result, "depreciation_usd")[12:] == pytest.approx([0.0] * 12)
    assert result.months[11].book_value_usd == pytest.approx(300.0)
    assert result.residual_value_usd == pytest.approx(300.0)
    assert result.months[-1].residual_value_usd == pytest.approx(300.0)
    assert result.months[-1].total_usd == pytest.approx(-300.0)
    assert result.total_usd == pytest.approx(900.0)
    assert result.capex_usd == pytest.approx(1200.0)


def test_residual_is_the_book_value_at_a_short_horizon() -> None:
    item = CapexItem("server", 1200.0, depreciation_years=1, residual_fraction=0.25)
    result = evaluate_one(Plan("owned", capex=(item,)), Traffic(), 6)
    assert result.residual_value_usd == pytest.approx(1200.0 - 6 * 75.0)
    assert result.total_usd == pytest.approx(450.0)


def test_no_residual_value_keeps_the_whole_purchase() -> None:
    item = CapexItem("server", 1200.0, depreciation_years=1, residual_fraction=0.25)
    result = evaluate_one(Plan("owned", capex=(item,)), Traffic(), 6, residual=ResidualValue.NONE)
    assert result.residual_value_usd == 0.0
    assert result.total_usd == pytest.approx(1200.0)


def test_capex_after_the_horizon_is_outside_the_scenario() -> None:
    plan = Plan("owned", capex=(CapexItem("later", 500.0, month=13),), opex=(OpexLine("rent", 10.0),))
    assert evaluate_one(plan, Traffic(), 12).total_usd == pytest.approx(120.0)
    assert evaluate_one(plan, Traffic(), 13, residual=ResidualValue.NONE).total_usd == pytest.approx(630.0)


def test_amortised_cost_adds_up_to_the_total_with_book_value_residual() -> None:
    plan = Plan(
        "owned",
        capex=(CapexItem("server", 30_000.0, month=2, depreciation_years=3, residual_fraction=0.1),),
        opex=(OpexLine("power", 400.0, CostCategory.POWER),),
    )
    result = evaluate_one(plan, Traffic(tokens_per_month=2e9), 18)
    amortised = sum(month.opex_usd + month.depreciation_usd for month in result.months)
    assert amortised == pytest.approx(result.total_usd)


OWNED = OwnedCapacity(
    tokens_per_month_per_unit=100e6,
    capex_usd_per_unit=1000.0,
    burst_usd_per_million_tokens=1.0,
    lead_time_months=2,
    initial_units=1,
    unit_opex=(UnitOpexLine("power", 10.0, CostCategory.POWER),),
    depreciation_years=10,
)
DEMAND = Traffic(monthly_tokens=(50e6, 150e6, 250e6, 250e6, 350e6, 100e6))


def test_owned_units_arrive_after_the_lead_time_and_are_kept() -> None:
    result = evaluate_one(Plan("owned", capacity=OWNED), DEMAND, 6, residual=ResidualValue.NONE)
    # needed: 1, 2, 3, 3, 4, 1; nothing ordered in month 1 arrives before month 3
    assert monthly(result, "units_in_service") == [1, 1, 3, 3, 4, 4]
    # the initial unit and the two for month 3 in month 1, the fourth two months before month 5
    assert monthly(result, "capex_usd") == pytest.approx([3000.0, 0.0, 1000.0, 0.0, 0.0, 0.0])
    # month 2 needs 150M tokens but has one unit: 50M at the burst price
    assert monthly(result, "burst_tokens") == pytest.approx([0.0, 50e6, 0.0, 0.0, 0.0, 0.0])
    power = [10.0 * units for units in (1, 1, 3, 3, 4, 4)]
    burst = [0.0, 50.0, 0.0, 0.0, 0.0, 0.0]
    assert monthly(result, "opex_usd") == pytest.approx([p + b for p, b in zip(power, burst, strict=True)])
    assert result.total_usd == pytest.approx(4000.0 + sum(power) + 50.0)
    kinds = {line.name: line.kind for line in result.lines}
    assert kinds == {"servers": CostKind.CAPEX, "power": CostKind.OPEX, "burst": CostKind.OPEX}


def test_owned_units_capped_send_the_rest_to_burst() -> None:
    capped = dataclasses.replace(OWNED, max_units=3)
    result = evaluate_one(Plan("owned", capacity=capped), DEMAND, 6, residual=ResidualValue.NONE)
    assert monthly(result, "units_in_service") == [1, 1, 3, 3, 3, 3]
    assert monthly(result, "burst_tokens") == pytest.approx([0.0, 50e6, 0.0, 0.0, 50e6, 0.0])


def test_owned_without_lead_time_buys_in_the_month_of_need() -> None:
    prompt = dataclasses.replace(OWNED, lead_time_months=0, initial_units=0)
    result = evaluate_one(Plan("owned", capacity=prompt), DEMAND, 6, residual=ResidualValue.NONE)
    assert monthly(result, "units_in_service") == [1, 2, 3, 3, 4, 4]
    assert monthly(result, "capex_usd") == pytest.approx([1000.0, 1000.0, 1000.0, 0.0, 1000.0, 0.0])
    assert monthly(result, "burst_tokens") == pytest.approx([0.0] * 6)


def test_owned_units_depreciate_from_delivery() -> None:
    result = evaluate_one(Plan("owned", capacity=OWNED), DEMAND, 6)
    life = 120
    # 1 unit from month 1, 2 more from month 3, 1 more from month 5
    months_in_service = 6 * 1 + 4 * 2 + 2 * 1
    assert sum(monthly(result, "depreciation_usd")) == pytest.approx(1000.0 * months_in_service / life)
    assert result.residual_value_usd == pytest.approx(4000.0 - 1000.0 * months_in_service / life)


def test_lead_time_longer_than_the_horizon_orders_nothing() -> None:
    slow = dataclasses.replace(OWNED, lead_time_months=12)
    result = evaluate_one(Plan("owned", capacity=slow), DEMAND, 6, residual=ResidualValue.NONE)
    assert monthly(result, "units_in_service") == [1] * 6
    assert result.capex_usd == pytest.approx(1000.0)


def test_npv_discounts_month_m_by_m_minus_one_periods() -> None:
    result = evaluate_one(Plan("rent", opex=(OpexLine("rent", 1000.0),)), Traffic(), 3, rate=0.12)
    i = (1.12) ** (1 / 12) - 1
    assert result.npv_usd == pytest.approx(1000.0 * (1 + 1 / (1 + i) + 1 / (1 + i) ** 2))
    assert result.months[0].discount_factor == 1.0
    assert sum(monthly(result, "present_value_usd")) == pytest.approx(result.npv_usd)


def test_totals_and_columns_agree() -> None:
    plan = Plan(
        "mixed",
        capex=(CapexItem("nic", 5000.0, month=4, depreciation_years=2, residual_fraction=0.2),),
        opex=(OpexLine("staff", 900.0, CostCategory.STAFF, annual_escalation=0.05),),
        usage=(UsageLine("tokens", 1.5),),
        capacity=OWNED,
    )
    result = evaluate_one(plan, Traffic(tokens_per_month=80e6, growth_per_month=0.2), 15, rate=0.1)
    assert sum(monthly(result, "total_usd")) == pytest.approx(result.total_usd)
    assert result.months[-1].cumulative_usd == pytest.approx(result.total_usd)
    assert result.capex_usd + result.opex_usd - result.residual_value_usd == pytest.approx(result.total_usd)
    assert sum(line.total_usd for line in result.lines) == pytest.approx(result.capex_usd + result.opex_usd)
    for index, month in enumerate(result.months):
        assert sum(line.monthly_usd[index] for line in result.lines) == pytest.approx(
            month.capex_usd + month.opex_usd
        )


def test_evaluation_reports_the_monthly_rate_and_the_cheapest() -> None:
    scenario = Scenario(
        plans=(Plan("dear", usage=(UsageLine("t", 3.0),)), Plan("cheap", usage=(UsageLine("t", 1.0),))),
        traffic=Traffic(tokens_per_month=1e9),
        assumptions=FinanceAssumptions(discount_rate_annual=0.1),
    )
    evaluation = evaluate(scenario)
    assert evaluation.monthly_discount_rate == pytest.approx(monthly_rate(0.1))
    assert evaluation.cheapest().name == "cheap"
    assert evaluation.plan("dear").total_usd == pytest.approx(3 * 1000 * 36)
