"""Operations staff scales with the accelerators run, above a minimum per deployment."""

from __future__ import annotations

import pytest

from tests.unit.recommend_catalog import snapshot
from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.costs.staff import SCALED_STAFF, STAFF, staff_amounts, staff_fte, staff_lines
from wheretorun.engine.recommend import recommend
from wheretorun.engine.workload import Constraints, InferenceWorkload, OptionKind, TrainingWorkload


def test_a_small_deployment_pays_the_minimum_only() -> None:
    a = Assumptions()
    # 8 accelerators / 250 per FTE = 0.032 FTE < the owned minimum 0.25 FTE ($4,500 / $18,000)
    lines = staff_lines(a.operations_staff_usd_per_month, 8, 12, a, "owned")
    assert [line.name for line in lines] == [STAFF]
    assert lines[0].usd == pytest.approx(4500 * 12)
    assert staff_fte(a.operations_staff_usd_per_month, 8, a) == pytest.approx(0.25)


def test_a_large_deployment_pays_one_fte_per_250_accelerators() -> None:
    a = Assumptions()
    # 512 / 250 = 2.048 FTE x $18,000 = $36,864 a month; the minimum $4,500 is its fixed part
    lines = staff_lines(a.operations_staff_usd_per_month, 512, 12, a, "owned")
    assert {line.name: line.usd for line in lines} == pytest.approx(
        {STAFF: 4500 * 12, SCALED_STAFF: (36864 - 4500) * 12}
    )
    assert staff_fte(a.operations_staff_usd_per_month, 512, a) == pytest.approx(2.048)


@pytest.mark.parametrize(
    ("accelerators", "above_minimum"),
    # the owned minimum is $4,500 a month (0.25 FTE); the fleet rate $18,000 per 250 accelerators
    [(0, None), (8, None), (62.5, None), (63, (63 / 250 * 18_000 - 4500) * 12), (512, (36864 - 4500) * 12)],
)
def test_the_amounts_are_the_minimum_and_what_the_fleet_adds(
    accelerators: float, above_minimum: float | None
) -> None:
    a = Assumptions()
    fixed, above = staff_amounts(a.operations_staff_usd_per_month, accelerators, 12, a)
    assert fixed == pytest.approx(4500 * 12)
    assert above == (None if above_minimum is None else pytest.approx(above_minimum))


def test_hosted_serving_reports_its_marginal_cost_without_the_staff_minimum() -> None:
    workload = InferenceWorkload(
        models=("llama-3.1-8b",), requests_per_day=300, input_tokens=800, output_tokens=200
    )
    result = recommend(
        workload,
        Constraints(allowed_options=(OptionKind.HOSTED_API,)),
        Assumptions(horizon_months=12),
        snapshot(),
    )
    best = result.options[0]
    # together_ai 8B: $0.18 per million input and output tokens; tokens = 300 x 1,000 x 365 days
    # over 12 months of 730 h: 300 / 24 x 8,760 h x 1,000 tokens
    tokens = 300 / 24 * 8760 * 1000
    assert float(best.marginal_usd_per_million_tokens) == pytest.approx(0.18, abs=1e-4)
    assert float(best.usd_per_million_tokens) == pytest.approx(
        (tokens * 0.18 / 1e6 + 900 * 12) / tokens * 1e6, rel=1e-3
    )
    assert "without the fixed staff minimum" in best.rationale


def test_cloud_training_pays_staff_for_the_hours_its_runs_take() -> None:
    workload = TrainingWorkload(
        model="llama-3.1-8b", method="lora", tokens=1e9, deadline_hours=48, runs_per_year=12
    )
    a = Assumptions(horizon_months=12)
    result = recommend(workload, Constraints(allowed_options=(OptionKind.CLOUD,)), a, snapshot())
    assert any(o.setup.pricing_mode in ("on_demand", "spot") for o in result.options)
    for option in result.options:
        staff = sum(float(line.usd) for line in option.breakdown if line.name.startswith("operations staff"))
        assert option.wall_clock_hours_per_run is not None
        assert option.accelerator_hours_per_run is not None
        if option.setup.pricing_mode in ("on_demand", "spot"):
            # 12 runs x wall hours / 730 h a month x max($3,600, accelerators / 250 x $18,000)
            months = 12 * option.wall_clock_hours_per_run / 730
            fte_usd = max(3600.0, option.setup.accelerator_count / 250 * 18000)
            assert staff == pytest.approx(months * fte_usd, rel=1e-3)
        assert float(option.marginal_usd_per_run) < float(option.usd_per_run)
