"""Request bodies to finance values, and finance results to response dictionaries.

Money leaves as `Decimal` rounded to the cent; the finance engine computes in floats.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal, localcontext
from typing import Any

from wheretorun.bounds import check_total_growth
from wheretorun.engine import finance
from wheretorun.engine.finance import (
    BreakEven,
    BuyVersusRent,
    Comparison,
    Evaluation,
    MonteCarloResult,
    PlanResult,
    Sensitivity,
)
from wheretorun.scenarios.schemas import CustomPlanIn, ScenarioBody

__all__ = [
    "break_even_dict",
    "buy_versus_rent_dict",
    "comparison_dict",
    "custom_plan",
    "evaluation_dict",
    "finance_scenario",
    "monte_carlo_dict",
    "sensitivity_dict",
    "usd",
]

CENT = Decimal("0.01")


# Enough digits for any finite float (up to ~1.8e308) at cent precision: rounding a large amount
# can then never fail (the default context's 28 digits end at 10^26 USD).
_FLOAT_DIGITS = 330


def usd(value: float | None) -> str | None:
    """A float amount as exact dollars and cents, written as the API writes Decimals (a string)."""
    if value is None or not math.isfinite(value):
        return None
    with localcontext(prec=_FLOAT_DIGITS):
        return str(Decimal(repr(value)).quantize(CENT))


def custom_plan(plan: CustomPlanIn) -> finance.Plan:
    """The finance Plan a custom plan body describes (validated by the finance engine)."""
    capacity = None
    if plan.capacity is not None:
        values = plan.capacity.model_dump(exclude={"unit_opex"})
        unit_opex = tuple(
            finance.UnitOpexLine(**{**line.model_dump(), "category": finance.CostCategory(line.category)})
            for line in plan.capacity.unit_opex
        )
        capacity = finance.OwnedCapacity(**values, unit_opex=unit_opex)
    return finance.Plan(
        name=plan.name,
        capex=tuple(finance.CapexItem(**_with_category(item.model_dump())) for item in plan.capex),
        opex=tuple(finance.OpexLine(**_with_category(line.model_dump())) for line in plan.opex),
        usage=tuple(finance.UsageLine(**_with_category(line.model_dump())) for line in plan.usage),
        instances=tuple(finance.InstanceLine(**_with_category(line.model_dump())) for line in plan.instances),
        capacity=capacity,
    )


def _with_category(values: dict[str, Any]) -> dict[str, Any]:
    return {**values, "category": finance.CostCategory(values["category"])}


def finance_scenario(body: ScenarioBody, plans: Sequence[finance.Plan], name: str = "") -> finance.Scenario:
    traffic = body.traffic
    if traffic.monthly_tokens is None:
        check_total_growth(
            traffic.growth_per_month, body.assumptions.horizon_months, "body.traffic.growth_per_month"
        )
    return finance.Scenario(
        plans=tuple(plans),
        traffic=finance.Traffic(
            tokens_per_month=traffic.tokens_per_month,
            growth_per_month=traffic.growth_per_month,
            monthly_tokens=tuple(traffic.monthly_tokens) if traffic.monthly_tokens is not None else None,
        ),
        assumptions=finance.FinanceAssumptions(
            horizon_months=body.assumptions.horizon_months,
            discount_rate_annual=body.assumptions.discount_rate_annual,
            residual_value=finance.ResidualValue(body.assumptions.residual_value),
        ),
        name=name,
    )


def _month_dict(month: finance.MonthFlow) -> dict[str, Any]:
    return {
        "month": month.month,
        "tokens": month.tokens,
        "capex_usd": usd(month.capex_usd),
        "opex_usd": usd(month.opex_usd),
        "residual_value_usd": usd(month.residual_value_usd),
        "total_usd": usd(month.total_usd),
        "cumulative_usd": usd(month.cumulative_usd),
        "present_value_usd": usd(month.present_value_usd),
        "depreciation_usd": usd(month.depreciation_usd),
        "book_value_usd": usd(month.book_value_usd),
        "units_in_service": month.units_in_service,
        "burst_tokens": month.burst_tokens,
        "usd_per_million_tokens": usd(month.usd_per_million_tokens),
    }


def _plan_dict(plan: PlanResult) -> dict[str, Any]:
    return {
        "name": plan.name,
        "total_usd": usd(plan.total_usd),
        "npv_usd": usd(plan.npv_usd),
        "capex_usd": usd(plan.capex_usd),
        "opex_usd": usd(plan.opex_usd),
        "residual_value_usd": usd(plan.residual_value_usd),
        "tokens": plan.tokens,
        "usd_per_million_tokens": usd(plan.usd_per_million_tokens),
        "monthly": [_month_dict(month) for month in plan.months],
        "lines": [
            {
                "name": line.name,
                "category": line.category.value,
                "kind": line.kind.value,
                "total_usd": usd(line.total_usd),
            }
            for line in plan.lines
        ],
    }


def evaluation_dict(evaluation: Evaluation) -> dict[str, Any]:
    assumptions = evaluation.scenario.assumptions
    return {
        "plans": [_plan_dict(plan) for plan in evaluation.plans],
        "cheapest": evaluation.cheapest().name,
        "assumptions": {
            "horizon_months": assumptions.horizon_months,
            "discount_rate_annual": assumptions.discount_rate_annual,
            "monthly_discount_rate": evaluation.monthly_discount_rate,
            "residual_value": assumptions.residual_value.value,
        },
    }


def monte_carlo_dict(result: MonteCarloResult) -> dict[str, Any]:
    return {
        "samples": result.samples,
        "seed": result.seed,
        "metric": result.metric.value,
        "plans": [
            {
                "name": plan.plan,
                "p10_usd": usd(plan.p10_usd),
                "p50_usd": usd(plan.p50_usd),
                "p90_usd": usd(plan.p90_usd),
                "mean_usd": usd(plan.mean_usd),
                "deterministic_usd": usd(plan.deterministic_usd),
                "probability_cheapest": plan.probability_cheapest,
            }
            for plan in result.plans
        ],
    }


def sensitivity_dict(result: Sensitivity) -> dict[str, Any]:
    return {
        "metric": result.metric.value,
        "plans": [
            {
                "name": tornado.plan,
                "base_usd": usd(tornado.base_usd),
                "bars": [
                    {
                        "input": bar.input,
                        "low": bar.low,
                        "high": bar.high,
                        "low_usd": usd(bar.low_usd),
                        "high_usd": usd(bar.high_usd),
                        "swing_usd": usd(bar.swing_usd),
                    }
                    for bar in tornado.bars
                ],
            }
            for tornado in result.plans
        ],
    }


def break_even_dict(result: BreakEven) -> dict[str, Any]:
    return {
        "plan_a": result.plan_a,
        "plan_b": result.plan_b,
        "variable": result.variable.value,
        "unit": result.unit,
        "metric": result.metric.value,
        "never": result.never,
        "value": result.value,
        "crossings": [
            {
                "x": crossing.x,
                "kind": crossing.kind.value,
                "plan_a_usd": usd(crossing.plan_a_usd),
                "plan_b_usd": usd(crossing.plan_b_usd),
                "cheaper_below": crossing.cheaper_below,
                "cheaper_above": crossing.cheaper_above,
            }
            for crossing in result.crossings
        ],
        "curve": [
            {"x": point.x, "plan_a_usd": usd(point.plan_a_usd), "plan_b_usd": usd(point.plan_b_usd)}
            for point in result.curve
        ],
    }


def buy_versus_rent_dict(result: BuyVersusRent) -> dict[str, Any]:
    return {
        "buy": result.buy,
        "rent": result.rent,
        "total_savings_usd": usd(result.total_savings_usd),
        "npv_savings_usd": usd(result.npv_savings_usd),
        "payback_month": result.payback_month,
        "discounted_payback_month": result.discounted_payback_month,
        "irr_monthly": result.irr_monthly,
        "irr_annual": result.irr_annual,
    }


def comparison_dict(result: Comparison) -> dict[str, Any]:
    def rows(items: Sequence[Any], with_category: bool) -> list[dict[str, Any]]:
        converted = []
        for row in items:
            entry: dict[str, Any] = {
                "key": row.key,
                "usd": [usd(value) for value in row.usd],
                "delta_usd": [usd(value) for value in row.delta_usd],
                "changes": [change.value for change in row.changes],
            }
            if with_category and row.category is not None:
                entry["category"] = row.category.value
            converted.append(entry)
        return converted

    return {
        "labels": list(result.labels),
        "baseline": result.baseline,
        "summary": rows(result.summary, False),
        "categories": rows(result.categories, False),
        "lines": rows(result.lines, True),
    }
