"""Plans side by side: deltas per line and category, added/removed/changed, across scenarios."""

from __future__ import annotations

import dataclasses

import pytest

from wheretorun.engine.errors import InvalidSpec
from wheretorun.engine.finance import (
    CapexItem,
    Change,
    CostCategory,
    FinanceAssumptions,
    OpexLine,
    Plan,
    ResidualValue,
    Scenario,
    Traffic,
    UsageLine,
    compare,
    evaluate,
)

ASSUMPTIONS = FinanceAssumptions(
    horizon_months=12, discount_rate_annual=0.0, residual_value=ResidualValue.NONE
)
HOSTED = Plan("hosted", usage=(UsageLine("tokens", 2.0),))
OWNED = Plan(
    "owned",
    capex=(CapexItem("server", 50_000.0),),
    opex=(OpexLine("staff", 2_000.0, CostCategory.STAFF), OpexLine("power", 500.0, CostCategory.POWER)),
)


def results(*plans: Plan) -> Scenario:
    return Scenario(plans=plans, traffic=Traffic(tokens_per_month=1e9), assumptions=ASSUMPTIONS)


def test_summary_deltas_against_the_baseline() -> None:
    evaluation = evaluate(results(HOSTED, OWNED))
    comparison = compare(evaluation.plans)
    assert comparison.labels == ("hosted", "owned")
    assert comparison.baseline == "hosted"
    total = comparison.summary[0]
    assert total.key == "total_usd"
    assert total.usd == pytest.approx((24_000.0, 80_000.0))
    assert total.delta_usd == pytest.approx((0.0, 56_000.0))
    assert total.changes == (Change.SAME, Change.CHANGED)


def test_lines_are_matched_by_name_with_added_and_removed() -> None:
    comparison = compare(evaluate(results(HOSTED, OWNED)).plans)
    rows = {row.key: row for row in comparison.lines}
    assert rows["tokens"].usd[1] is None
    assert rows["tokens"].usd[0] == pytest.approx(24_000.0)
    assert rows["tokens"].delta_usd == pytest.approx((0.0, -24_000.0))
    assert rows["tokens"].changes == (Change.SAME, Change.REMOVED)
    assert rows["server"].usd[0] is None
    assert rows["server"].usd[1] == pytest.approx(50_000.0)
    assert rows["server"].changes == (Change.SAME, Change.ADDED)
    assert rows["server"].category is CostCategory.HARDWARE
    assert list(rows) == ["tokens", "server", "staff", "power"]


def test_categories_add_up_the_lines() -> None:
    two_staff = dataclasses.replace(
        OWNED, opex=(*OWNED.opex, OpexLine("on-call", 1_000.0, CostCategory.STAFF)), name="owned+"
    )
    comparison = compare(evaluate(results(OWNED, two_staff)).plans)
    staff = {row.key: row for row in comparison.categories}["staff"]
    assert staff.usd == pytest.approx((24_000.0, 36_000.0))
    assert staff.delta_usd == pytest.approx((0.0, 12_000.0))
    assert staff.changes == (Change.SAME, Change.CHANGED)


def test_two_versions_of_a_scenario_compare_with_labels() -> None:
    before = evaluate(results(OWNED)).plans[0]
    cheaper_power = dataclasses.replace(OWNED, opex=(OpexLine("staff", 2_000.0), OpexLine("power", 400.0)))
    after = evaluate(results(cheaper_power)).plans[0]
    comparison = compare([before, after], labels=["v1", "v2"], baseline=1)
    rows = {row.key: row for row in comparison.lines}
    assert comparison.baseline == "v2"
    assert rows["power"].delta_usd == pytest.approx((1_200.0, 0.0))
    assert rows["staff"].changes == (Change.SAME, Change.SAME)
    assert rows["power"].changes == (Change.CHANGED, Change.SAME)


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"labels": ["a"]}, "compare.labels"),
        ({"labels": ["a", "a"]}, "compare.labels"),
        ({"baseline": 2}, "compare.baseline"),
    ],
)
def test_bad_comparisons_name_the_field(arguments: dict[str, object], field: str) -> None:
    plans = evaluate(results(HOSTED, OWNED)).plans
    with pytest.raises(InvalidSpec) as error:
        compare(plans, **arguments)  # type: ignore[arg-type]
    assert error.value.field == field


def test_same_names_from_two_scenarios_need_labels() -> None:
    plan = evaluate(results(HOSTED)).plans[0]
    with pytest.raises(InvalidSpec) as error:
        compare([plan, plan])
    assert error.value.field == "compare.labels"


def test_one_plan_is_not_a_comparison() -> None:
    with pytest.raises(InvalidSpec) as error:
        compare(evaluate(results(HOSTED)).plans)
    assert error.value.field == "compare.plans"
