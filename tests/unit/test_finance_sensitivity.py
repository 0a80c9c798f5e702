"""The tornado: swings computed by hand, sorted, scoped to a plan; standard ranges; bad inputs."""

from __future__ import annotations

import pytest

from wheretorun.engine.errors import InvalidSpec
from wheretorun.engine.finance import (
    CostCategory,
    FinanceAssumptions,
    InstanceLine,
    Metric,
    OpexLine,
    OwnedCapacity,
    Plan,
    Scenario,
    SensitivityRange,
    Traffic,
    UnitOpexLine,
    UsageLine,
    sensitivity,
    standard_ranges,
)

HOSTED = Plan("hosted", usage=(UsageLine("tokens", 2.0),))
STAFFED = Plan(
    "staffed",
    opex=(OpexLine("staff", 1000.0, CostCategory.STAFF), OpexLine("power", 100.0, CostCategory.POWER)),
)
SCENARIO = Scenario(
    plans=(HOSTED, STAFFED),
    traffic=Traffic(tokens_per_month=1e9),
    assumptions=FinanceAssumptions(horizon_months=10, discount_rate_annual=0.1),
)


def test_swings_are_computed_and_sorted() -> None:
    ranges = [
        SensitivityRange("electricity", 0.5, 2.0),  # staffed: power 500..2000, swing 1,500
        SensitivityRange("traffic", 0.5, 1.5),  # hosted: 10,000..30,000, swing 20,000
        SensitivityRange("price:staff", 0.9, 1.1),  # staffed: 9,000..11,000, swing 2,000
    ]
    result = sensitivity(SCENARIO, ranges)
    hosted = result.plan("hosted")
    assert hosted.base_usd == pytest.approx(20_000.0)
    assert [bar.input for bar in hosted.bars][0] == "traffic"
    assert hosted.bars[0].low_usd == pytest.approx(10_000.0)
    assert hosted.bars[0].high_usd == pytest.approx(30_000.0)
    assert hosted.bars[0].swing_usd == pytest.approx(20_000.0)
    staffed = result.plan("staffed")
    assert [bar.input for bar in staffed.bars] == ["price:staff", "electricity", "traffic"]
    assert [bar.swing_usd for bar in staffed.bars] == pytest.approx([2000.0, 1500.0, 0.0])


def test_discount_rate_moves_only_the_npv() -> None:
    ranges = [SensitivityRange("discount_rate_annual", 0.0, 0.3)]
    nominal = sensitivity(SCENARIO, ranges).plan("staffed").bars[0]
    assert nominal.swing_usd == 0.0
    discounted = sensitivity(SCENARIO, ranges, metric=Metric.NPV).plan("staffed").bars[0]
    assert discounted.low_usd == pytest.approx(11_000.0)  # undiscounted at 0%
    assert discounted.high_usd < discounted.low_usd


def test_horizon_range_re_evaluates_the_scenario() -> None:
    bar = sensitivity(SCENARIO, [SensitivityRange("horizon_months", 5, 20)]).plan("staffed").bars[0]
    assert bar.low_usd == pytest.approx(5 * 1100.0)
    assert bar.high_usd == pytest.approx(20 * 1100.0)


def test_plan_scoped_input_leaves_other_plans_alone() -> None:
    cheap_cloud = Plan(
        "cloud", instances=(InstanceLine("gpu", 1.0, 1e9, utilisation=0.5, hours_per_month=100),)
    )
    other_cloud = Plan(
        "other", instances=(InstanceLine("gpu", 1.0, 1e9, utilisation=0.5, hours_per_month=100),)
    )
    base = Scenario(
        plans=(cheap_cloud, other_cloud),
        traffic=Traffic(tokens_per_month=1e9),
        assumptions=SCENARIO.assumptions,
    )
    result = sensitivity(base, [SensitivityRange("utilisation", 0.25, 1.0, plan="cloud")])
    moved = result.plan("cloud").bars[0]
    assert moved.input == "utilisation (cloud)"
    assert moved.low_usd == pytest.approx(10 * 4 * 100.0)  # 1e9 / 2.5e8: 4 instances
    assert moved.high_usd == pytest.approx(10 * 1 * 100.0)
    assert result.plan("other").bars[0].swing_usd == 0.0


def test_standard_ranges_cover_what_the_scenario_has() -> None:
    owned = Plan(
        "owned",
        capacity=OwnedCapacity(
            1e10,
            100_000.0,
            2.0,
            utilisation=0.7,
            unit_opex=(UnitOpexLine("power", 500.0, CostCategory.POWER),),
        ),
    )
    spot = Plan(
        "spot",
        instances=(InstanceLine("gpu", 2.0, 1e9, fallback_usd_per_instance_hour=4.0, spot_availability=0.8),),
    )
    base = Scenario(plans=(HOSTED, owned, spot), traffic=Traffic(tokens_per_month=1e9, growth_per_month=0.03))
    ranges = {(item.input, item.plan): item for item in standard_ranges(base)}
    assert ("electricity", None) in ranges
    assert ("price:hardware", None) in ranges
    assert ("spot_availability", None) in ranges
    assert ("price:staff", None) not in ranges
    assert ranges[("utilisation", "owned")].low == pytest.approx(0.5)
    assert ranges[("utilisation", "owned")].high == pytest.approx(0.8)
    assert ranges[("growth_per_month", None)].low == pytest.approx(0.01)
    assert ranges[("horizon_months", None)].low == 24
    result = sensitivity(base, list(ranges.values()))  # every proposed range is accepted
    assert len(result.plans) == 3


@pytest.mark.parametrize(
    ("item", "field"),
    [
        (SensitivityRange("traffic", 1.5, 0.5), "sensitivity.ranges[0].low"),
        (SensitivityRange("utilisation", 0.5, 1.5), "sensitivity.ranges[0].high"),
        (SensitivityRange("sunshine", 0.5, 1.5), "sensitivity.ranges[0].input"),
        (SensitivityRange("price:caviar", 0.5, 1.5), "sensitivity.ranges[0].input"),
        (SensitivityRange("traffic", 0.5, 1.5, plan="hosted"), "sensitivity.ranges[0].plan"),
        (SensitivityRange("electricity", 0.5, 1.5, plan="nope"), "sensitivity.ranges[0].plan"),
        (SensitivityRange("horizon_months", 0, 12), "sensitivity.ranges[0].low"),
        (SensitivityRange("horizon_months", 6, 12.5), "sensitivity.ranges[0].high"),
        (SensitivityRange("discount_rate_annual", -0.1, 0.1), "sensitivity.ranges[0].low"),
    ],
)
def test_bad_ranges_name_the_field(item: SensitivityRange, field: str) -> None:
    with pytest.raises(InvalidSpec) as error:
        sensitivity(SCENARIO, [item])
    assert error.value.field == field


def test_growth_cannot_move_an_explicit_series() -> None:
    series = Scenario(plans=(HOSTED,), traffic=Traffic(monthly_tokens=(1e9,) * 36))
    with pytest.raises(InvalidSpec) as error:
        sensitivity(series, [SensitivityRange("growth_per_month", 0.0, 0.1)])
    assert error.value.field == "sensitivity.ranges[0].input"


def test_horizon_beyond_an_explicit_series_is_refused() -> None:
    series = Scenario(plans=(HOSTED,), traffic=Traffic(monthly_tokens=(1e9,) * 36))
    with pytest.raises(InvalidSpec) as error:
        sensitivity(series, [SensitivityRange("horizon_months", 12, 48)])
    assert error.value.field == "sensitivity.ranges[0].high"


def test_no_ranges_is_an_error() -> None:
    with pytest.raises(InvalidSpec) as error:
        sensitivity(SCENARIO, [])
    assert error.value.field == "sensitivity.ranges"
