"""Break-even by volume, utilisation and horizon, against closed forms; "never"; bad inputs."""

from __future__ import annotations

import pytest

from wheretorun.engine.errors import InvalidSpec
from wheretorun.engine.finance import (
    BreakEvenVariable,
    CapexItem,
    CrossingKind,
    FinanceAssumptions,
    InstanceLine,
    Metric,
    OpexLine,
    OwnedCapacity,
    Plan,
    ResidualValue,
    Scenario,
    Traffic,
    UsageLine,
    break_even,
    evaluate,
)

HOSTED = Plan("hosted", usage=(UsageLine("tokens", 2.0),))
FIXED = Plan("fixed", opex=(OpexLine("cluster", 10_000.0),))


def scenario(*plans: Plan, tokens: float = 1e9, horizon: int = 12, **assumptions: object) -> Scenario:
    return Scenario(
        plans=plans,
        traffic=Traffic(tokens_per_month=tokens),
        assumptions=FinanceAssumptions(horizon_months=horizon, **assumptions),  # type: ignore[arg-type]
    )


def test_volume_break_even_of_per_token_against_fixed_cost() -> None:
    # 2 USD per million tokens x v = 10,000 USD a month  =>  v = 5e9 tokens a month
    result = break_even(scenario(HOSTED, FIXED), "hosted", "fixed")
    assert result.variable is BreakEvenVariable.VOLUME
    assert result.value == pytest.approx(5e9, rel=1e-9)
    (crossing,) = result.crossings
    assert crossing.kind is CrossingKind.EQUAL
    assert crossing.plan_a_usd == pytest.approx(crossing.plan_b_usd, rel=1e-9)
    assert crossing.plan_a_usd == pytest.approx(120_000.0, rel=1e-6)
    assert (crossing.cheaper_below, crossing.cheaper_above) == ("hosted", "fixed")
    assert not result.never


def test_volume_break_even_keeps_the_forecast_growth() -> None:
    growing = Scenario(
        plans=(HOSTED, FIXED),
        traffic=Traffic(tokens_per_month=1e9, growth_per_month=0.1),
        assumptions=FinanceAssumptions(horizon_months=12),
    )
    result = break_even(growing, "hosted", "fixed")
    # hosted total = 2 x v/1e6 x sum(1.1^k, k < 12) = 120,000
    growth_sum = sum(1.1**k for k in range(12))
    assert result.value == pytest.approx(120_000 / (2 * growth_sum) * 1e6, rel=1e-9)


def test_curve_points_span_the_range_and_agree_with_evaluate() -> None:
    base = scenario(HOSTED, FIXED)
    result = break_even(base, "hosted", "fixed", low=1e8, high=1e11, points=31)
    assert len(result.curve) == 31
    assert result.curve[0].x == pytest.approx(1e8)
    assert result.curve[-1].x == pytest.approx(1e11)
    xs = [point.x for point in result.curve]
    assert xs == sorted(xs)
    middle = result.curve[15]
    at_middle = evaluate(
        Scenario(plans=base.plans, traffic=Traffic(tokens_per_month=middle.x), assumptions=base.assumptions)
    )
    assert middle.plan_a_usd == pytest.approx(at_middle.plan("hosted").total_usd)
    assert middle.plan_b_usd == pytest.approx(at_middle.plan("fixed").total_usd)


def test_never_when_the_curves_do_not_cross_in_range() -> None:
    result = break_even(scenario(HOSTED, FIXED), "hosted", "fixed", low=1e8, high=4e9)
    assert result.never
    assert result.value is None
    assert result.crossings == ()
    assert all(point.plan_a_usd < point.plan_b_usd for point in result.curve)


def test_whole_instances_cross_at_a_step() -> None:
    # One instance carries 2e9 tokens a month for 5 x 730 = 3,650 USD; the API costs 3 USD per
    # million tokens. The API reaches 3,650 at 1.2167e9 tokens (a real equality); past 2e9 a second
    # instance makes the cloud 7,300 while the API costs 6,000 (a step, never equal); the API
    # reaches 7,300 at 2.4333e9 (equal again).
    cloud = Plan("cloud", instances=(InstanceLine("gpu", 5.0, tokens_per_month_per_instance=2e9),))
    hosted = Plan("hosted", usage=(UsageLine("tokens", 3.0),))
    result = break_even(scenario(hosted, cloud), "hosted", "cloud", low=1e8, high=3e9, points=201)
    assert [crossing.kind for crossing in result.crossings] == [
        CrossingKind.EQUAL,
        CrossingKind.STEP,
        CrossingKind.EQUAL,
    ]
    first, step, third = result.crossings
    assert first.x == pytest.approx(3650 / 3.0 * 1e6, rel=1e-9)
    assert (first.cheaper_below, first.cheaper_above) == ("hosted", "cloud")
    assert step.x == pytest.approx(2e9, rel=1e-8)  # the jump sits just past 2e9 (float-noise guard)
    assert (step.cheaper_below, step.cheaper_above) == ("cloud", "hosted")
    assert abs(step.plan_a_usd - step.plan_b_usd) > 1000.0
    assert third.x == pytest.approx(7300 / 3.0 * 1e6, rel=1e-9)


def test_utilisation_break_even_of_owned_capacity() -> None:
    owned = Plan(
        "owned",
        capacity=OwnedCapacity(
            tokens_per_month_per_unit=1e9,
            capex_usd_per_unit=10_000.0,
            burst_usd_per_million_tokens=100.0,
            initial_units=1,
            max_units=1,
            depreciation_years=1,
        ),
    )
    rented = Plan("rented", opex=(OpexLine("rent", 3000.0),))
    # traffic 5e8 tokens, one unit: burst = max(0, 5e8 - u x 1e9) at 100 USD per million
    # owned total = 10,000 + 12 x burst; equal to 36,000 when burst = 26,000/12 a month
    result = break_even(
        scenario(owned, rented, tokens=5e8, residual_value=ResidualValue.NONE),
        "owned",
        "rented",
        BreakEvenVariable.UTILISATION,
    )
    burst_tokens = 26_000 / 12 / 100 * 1e6
    assert result.value == pytest.approx((5e8 - burst_tokens) / 1e9, rel=1e-9)
    assert result.crossings[0].cheaper_below == "rented"
    assert result.unit == "fraction of rated capacity"


def test_horizon_break_even_is_the_payback_of_a_purchase() -> None:
    buy = Plan("buy", capex=(CapexItem("server", 1050.0),))
    rent = Plan("rent", opex=(OpexLine("rental", 100.0),))
    base = scenario(buy, rent, horizon=24, residual_value=ResidualValue.NONE)
    result = break_even(base, "buy", "rent", BreakEvenVariable.HORIZON)
    assert result.value == pytest.approx(10.5)
    assert [point.x for point in result.curve] == list(range(1, 25))
    assert result.curve[9].plan_a_usd == pytest.approx(1050.0)
    assert result.curve[9].plan_b_usd == pytest.approx(1000.0)
    assert result.crossings[0].cheaper_below == "rent"


def test_npv_metric_moves_the_horizon_break_even_later() -> None:
    buy = Plan("buy", capex=(CapexItem("server", 1050.0),))
    rent = Plan("rent", opex=(OpexLine("rental", 100.0),))
    base = scenario(buy, rent, horizon=24, residual_value=ResidualValue.NONE, discount_rate_annual=0.3)
    nominal = break_even(base, "buy", "rent", BreakEvenVariable.HORIZON)
    discounted = break_even(base, "buy", "rent", BreakEvenVariable.HORIZON, metric=Metric.NPV)
    assert nominal.value is not None
    assert discounted.value is not None
    assert discounted.value > nominal.value


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"plan_a": "nope", "plan_b": "fixed"}, "break_even.plan_a"),
        ({"plan_a": "hosted", "plan_b": "nope"}, "break_even.plan_b"),
        ({"plan_a": "hosted", "plan_b": "hosted"}, "break_even.plan_b"),
        ({"plan_a": "hosted", "plan_b": "fixed", "low": 5.0, "high": 1.0}, "break_even.low"),
        ({"plan_a": "hosted", "plan_b": "fixed", "points": 1}, "break_even.points"),
        (
            {"plan_a": "hosted", "plan_b": "fixed", "variable": BreakEvenVariable.UTILISATION, "high": 1.5},
            "break_even.high",
        ),
        (
            {"plan_a": "hosted", "plan_b": "fixed", "variable": BreakEvenVariable.HORIZON, "high": 700},
            "break_even.high",
        ),
        (
            {"plan_a": "hosted", "plan_b": "fixed", "variable": BreakEvenVariable.UTILISATION, "plan": "x"},
            "break_even.plan",
        ),
        ({"plan_a": "hosted", "plan_b": "fixed", "plan": "hosted"}, "break_even.plan"),
    ],
)
def test_bad_break_even_requests_name_the_field(arguments: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidSpec) as error:
        break_even(scenario(HOSTED, FIXED), **arguments)  # type: ignore[arg-type]
    assert error.value.field == field


def test_volume_break_even_needs_traffic_to_scale() -> None:
    with pytest.raises(InvalidSpec) as error:
        break_even(scenario(HOSTED, FIXED, tokens=0.0), "hosted", "fixed")
    assert error.value.field == "traffic.tokens_per_month"


def test_variable_and_metric_may_be_strings() -> None:
    buy = Plan("buy", capex=(CapexItem("server", 1050.0),))
    rent = Plan("rent", opex=(OpexLine("rental", 100.0),))
    base = scenario(buy, rent, horizon=24, residual_value=ResidualValue.NONE)
    result = break_even(base, "buy", "rent", "horizon_months", metric="total_usd")  # type: ignore[arg-type]
    assert result.variable is BreakEvenVariable.HORIZON
    assert result.value == pytest.approx(10.5)
    with pytest.raises(InvalidSpec) as error:
        break_even(base, "buy", "rent", "price")  # type: ignore[arg-type]
    assert error.value.field == "break_even.variable"
