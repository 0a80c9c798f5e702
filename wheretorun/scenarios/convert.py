"""Scenario request bodies to the finance engine's values (the answers are read models in
`evaluation_schemas.py`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from wheretorun.bounds import check_total_growth
from wheretorun.engine import finance
from wheretorun.scenarios.schemas import CustomPlanIn, ScenarioBody

__all__ = ["custom_plan", "finance_scenario"]


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
