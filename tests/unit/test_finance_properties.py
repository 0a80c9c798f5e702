"""Properties of the finance core that must hold for any plan, traffic and rate (hypothesis)."""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from wheretorun.engine.finance import (
    CapexItem,
    CostCategory,
    CrossingKind,
    Distribution,
    DistributionKind,
    FinanceAssumptions,
    InstanceLine,
    OpexLine,
    OwnedCapacity,
    Plan,
    ResidualValue,
    Scenario,
    Traffic,
    UnitOpexLine,
    UsageLine,
    break_even,
    evaluate,
    monte_carlo,
    npv,
)

PRICES = st.floats(min_value=0.01, max_value=50.0)
TOKENS = st.floats(min_value=1e6, max_value=1e12)
GROWTH = st.floats(min_value=-0.1, max_value=0.2)
RATES = st.floats(min_value=0.0, max_value=1.0)
HORIZONS = st.integers(min_value=1, max_value=60)

USAGE_LINES = st.builds(
    UsageLine,
    name=st.just("tokens"),
    usd_per_unit=PRICES,
    units_per_million_tokens=st.floats(min_value=0.01, max_value=5.0),
)
INSTANCE_LINES = st.builds(
    InstanceLine,
    name=st.just("instances"),
    usd_per_instance_hour=PRICES,
    tokens_per_month_per_instance=st.floats(min_value=1e8, max_value=1e11),
    utilisation=st.floats(min_value=0.05, max_value=1.0),
    minimum_instances=st.integers(min_value=0, max_value=3),
)


@st.composite
def usage_linked_plans(draw: st.DrawFn) -> Plan:
    """Plans whose every cost line grows with traffic or stays fixed."""
    usage = draw(st.lists(USAGE_LINES, max_size=1))
    instances = draw(st.lists(INSTANCE_LINES, max_size=1))
    fixed = draw(st.lists(st.builds(OpexLine, name=st.just("fixed"), usd_per_month=PRICES), max_size=1))
    if not (usage or instances or fixed):
        usage = [UsageLine("tokens", 1.0)]
    return Plan("plan", usage=tuple(usage), instances=tuple(instances), opex=tuple(fixed))


def scenario_of(plans: tuple[Plan, ...], traffic: Traffic, horizon: int, rate: float = 0.08) -> Scenario:
    return Scenario(
        plans=plans,
        traffic=traffic,
        assumptions=FinanceAssumptions(horizon_months=horizon, discount_rate_annual=rate),
    )


@settings(max_examples=150, deadline=None)
@given(
    plan=usage_linked_plans(),
    tokens=TOKENS,
    growth=GROWTH,
    more=st.floats(min_value=1.0, max_value=10.0),
    horizon=HORIZONS,
)
def test_more_traffic_never_lowers_a_usage_linked_plan(
    plan: Plan, tokens: float, growth: float, more: float, horizon: int
) -> None:
    base = evaluate(scenario_of((plan,), Traffic(tokens, growth), horizon)).plans[0]
    busier = evaluate(scenario_of((plan,), Traffic(tokens * more, growth), horizon)).plans[0]
    assert busier.total_usd >= base.total_usd * (1 - 1e-12)


@settings(max_examples=200, deadline=None)
@given(
    flows=st.lists(st.floats(min_value=0.0, max_value=1e7), min_size=1, max_size=120),
    low=RATES,
    high=RATES,
)
def test_a_higher_discount_rate_never_raises_the_npv_of_costs(
    flows: list[float], low: float, high: float
) -> None:
    low, high = sorted((low, high))
    assert npv(flows, high) <= npv(flows, low) * (1 + 1e-12) + 1e-9


@settings(max_examples=100, deadline=None)
@given(plan=usage_linked_plans(), tokens=TOKENS, horizon=HORIZONS, low=RATES, high=RATES)
def test_a_higher_discount_rate_never_raises_an_evaluated_plan_npv(
    plan: Plan, tokens: float, horizon: int, low: float, high: float
) -> None:
    low, high = sorted((low, high))
    at_low = evaluate(scenario_of((plan,), Traffic(tokens), horizon, rate=low)).plans[0]
    at_high = evaluate(scenario_of((plan,), Traffic(tokens), horizon, rate=high)).plans[0]
    assert at_high.npv_usd <= at_low.npv_usd * (1 + 1e-12) + 1e-9


@settings(max_examples=60, deadline=None)
@given(
    plan_a=usage_linked_plans(),
    plan_b=usage_linked_plans(),
    tokens=st.floats(min_value=1e8, max_value=1e11),
    growth=st.floats(min_value=0.0, max_value=0.1),
    horizon=st.integers(min_value=1, max_value=36),
)
def test_a_break_even_found_is_a_real_crossing(
    plan_a: Plan, plan_b: Plan, tokens: float, growth: float, horizon: int
) -> None:
    plans = (dataclasses.replace(plan_a, name="a"), dataclasses.replace(plan_b, name="b"))
    scenario = scenario_of(plans, Traffic(tokens, growth), horizon)
    result = break_even(scenario, "a", "b", points=41)

    def difference(volume: float) -> float:
        at = evaluate(dataclasses.replace(scenario, traffic=Traffic(volume, growth)))
        return at.plan("a").total_usd - at.plan("b").total_usd

    for crossing in result.crossings:
        assert result.low <= crossing.x <= result.high
        if crossing.kind is CrossingKind.EQUAL:
            scale = max(abs(crossing.plan_a_usd), abs(crossing.plan_b_usd), 1.0)
            assert abs(difference(crossing.x)) <= 1e-6 * scale
        else:  # a jump: the cheaper plan changes across it
            below, above = difference(crossing.x * (1 - 1e-6)), difference(crossing.x * (1 + 1e-6))
            assert np.sign(below) != np.sign(above)


OWNED = st.builds(
    OwnedCapacity,
    tokens_per_month_per_unit=st.floats(min_value=1e9, max_value=1e11),
    capex_usd_per_unit=st.floats(min_value=1e3, max_value=1e6),
    burst_usd_per_million_tokens=PRICES,
    lead_time_months=st.integers(min_value=0, max_value=6),
    utilisation=st.floats(min_value=0.1, max_value=1.0),
    initial_units=st.integers(min_value=0, max_value=3),
    unit_opex=st.just((UnitOpexLine("power", 700.0, CostCategory.POWER),)),
    depreciation_years=st.floats(min_value=1.0, max_value=6.0),
    residual_fraction=st.floats(min_value=0.0, max_value=0.5),
)


@settings(max_examples=80, deadline=None)
@given(
    capacity=OWNED,
    tokens=TOKENS,
    growth=GROWTH,
    horizon=HORIZONS,
    residual=st.sampled_from(list(ResidualValue)),
)
def test_the_columns_of_any_plan_add_up(
    capacity: OwnedCapacity, tokens: float, growth: float, horizon: int, residual: ResidualValue
) -> None:
    plan = Plan(
        "owned",
        capacity=capacity,
        capex=(CapexItem("network", 20_000.0, month=2, depreciation_years=3),),
        usage=(UsageLine("licence", 0.01),),
    )
    scenario = Scenario(
        plans=(plan,),
        traffic=Traffic(tokens, growth),
        assumptions=FinanceAssumptions(horizon_months=horizon, residual_value=residual),
    )
    result = evaluate(scenario).plans[0]
    totals = [month.total_usd for month in result.months]
    assert np.isclose(sum(totals), result.total_usd, rtol=1e-9)
    assert np.isclose(
        sum(line.total_usd for line in result.lines), result.capex_usd + result.opex_usd, rtol=1e-9
    )
    units = [month.units_in_service or 0 for month in result.months]
    assert units == sorted(units)  # owned units are never sold before the end
    assert all(month.book_value_usd >= -1e-6 for month in result.months)
    assert 0.0 <= result.residual_value_usd <= result.capex_usd * (1 + 1e-9)
    if residual is ResidualValue.BOOK_VALUE:
        amortised = sum(month.opex_usd + month.depreciation_usd for month in result.months)
        assert np.isclose(amortised, result.total_usd, rtol=1e-9)


@settings(max_examples=30, deadline=None)
@given(
    capacity=OWNED,
    instances=INSTANCE_LINES,
    tokens=TOKENS,
    growth=GROWTH,
    horizon=HORIZONS,
    rate=RATES,
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_a_zero_variance_monte_carlo_reproduces_the_evaluation(
    capacity: OwnedCapacity,
    instances: InstanceLine,
    tokens: float,
    growth: float,
    horizon: int,
    rate: float,
    seed: int,
) -> None:
    plans = (Plan("owned", capacity=capacity), Plan("cloud", instances=(instances,)))
    scenario = scenario_of(plans, Traffic(tokens, growth), horizon, rate)
    fixed = (
        Distribution("traffic", DistributionKind.UNIFORM, 1.0, 1.0),
        Distribution("growth_per_month", DistributionKind.UNIFORM, growth, growth),
        Distribution("discount_rate_annual", DistributionKind.UNIFORM, rate, rate),
        Distribution(
            "utilisation", DistributionKind.UNIFORM, capacity.utilisation, capacity.utilisation, plan="owned"
        ),
    )
    result = monte_carlo(scenario, fixed, samples=17, seed=seed)
    expected = [plan.total_usd for plan in evaluate(scenario).plans]
    assert [outcome.p50_usd for outcome in result.plans] == expected
