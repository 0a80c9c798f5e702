"""The answers of scenario evaluation and comparison: read models built from the finance engine's
result values by attribute (`model_validate(result)`), not by hand-written dictionaries.

Money leaves as `Decimal` rounded to the cent (a JSON string); the finance engine computes in
floats, and an amount that is not finite (a cost per million tokens of a month without tokens)
is null.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal, localcontext
from enum import Enum
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from wheretorun.engine.finance import (
    BreakEven,
    BuyVersusRent,
    Evaluation,
    MonteCarloResult,
    Sensitivity,
)
from wheretorun.engine.money import CENT, FLOAT_DIGITS

__all__ = [
    "ScenarioBreakEvenRead",
    "BuyVersusRentRead",
    "ComparisonRead",
    "EvaluationRead",
    "MonteCarloRead",
    "SavedEvaluationRead",
    "SensitivityRead",
    "cents",
    "evaluation_fields",
]


def cents(value: float | None) -> Decimal | None:
    """A float amount as dollars and cents; None when there is none or it is not finite. Unlike
    `engine.money.rounded` (the binary value, as recommendations round), it rounds the float's
    shortest decimal form, as scenario answers always have: $2.675 is $2.68 here."""
    if value is None or not math.isfinite(value):
        return None
    with localcontext(prec=FLOAT_DIGITS):
        return Decimal(repr(value)).quantize(CENT)


def _value(item: Any) -> Any:
    return item.value if isinstance(item, Enum) else item


Usd = Annotated[Decimal | None, BeforeValidator(cents)]
EnumText = Annotated[str, BeforeValidator(_value)]
"""A name the engine holds as an enum member (a cost category, a metric): its value."""


class _FromResult(BaseModel):
    model_config = ConfigDict(from_attributes=True, frozen=True)


class MonthFlowRead(_FromResult):
    month: int
    tokens: float
    capex_usd: Usd
    opex_usd: Usd
    residual_value_usd: Usd
    total_usd: Usd
    cumulative_usd: Usd
    present_value_usd: Usd
    depreciation_usd: Usd
    book_value_usd: Usd
    units_in_service: int | None = Field(description="Owned capacity only.")
    burst_tokens: float | None = Field(description="Owned capacity only: tokens beyond the units in service.")
    usd_per_million_tokens: Usd


class PlanCostLineRead(_FromResult):
    name: str
    category: EnumText
    kind: EnumText
    total_usd: Usd


class PlanResultRead(_FromResult):
    name: str
    total_usd: Usd
    npv_usd: Usd
    capex_usd: Usd
    opex_usd: Usd
    residual_value_usd: Usd
    tokens: float
    usd_per_million_tokens: Usd
    monthly: list[MonthFlowRead] = Field(validation_alias="months")
    lines: list[PlanCostLineRead]


class FinanceAssumptionsRead(BaseModel):
    horizon_months: int
    discount_rate_annual: float
    monthly_discount_rate: float
    residual_value: str


class MonteCarloPlanRead(_FromResult):
    name: str = Field(validation_alias="plan")
    p10_usd: Usd
    p50_usd: Usd
    p90_usd: Usd
    mean_usd: Usd
    deterministic_usd: Usd
    probability_cheapest: float


class MonteCarloRead(_FromResult):
    samples: int
    seed: int
    metric: EnumText
    plans: list[MonteCarloPlanRead]


class TornadoBarRead(_FromResult):
    input: str
    low: float
    high: float
    low_usd: Usd
    high_usd: Usd
    swing_usd: Usd


class TornadoRead(_FromResult):
    name: str = Field(validation_alias="plan")
    base_usd: Usd
    bars: list[TornadoBarRead]


class SensitivityRead(_FromResult):
    metric: EnumText
    plans: list[TornadoRead]


class CrossingRead(_FromResult):
    x: float
    kind: EnumText
    plan_a_usd: Usd
    plan_b_usd: Usd
    cheaper_below: str | None
    cheaper_above: str | None


class CurvePointRead(_FromResult):
    x: float
    plan_a_usd: Usd
    plan_b_usd: Usd


class ScenarioBreakEvenRead(_FromResult):
    plan_a: str
    plan_b: str
    variable: EnumText
    unit: str
    metric: EnumText
    never: bool
    value: float | None
    crossings: list[CrossingRead]
    curve: list[CurvePointRead]


class BuyVersusRentRead(_FromResult):
    buy: str
    rent: str
    total_savings_usd: Usd
    npv_savings_usd: Usd
    payback_month: int | None
    discounted_payback_month: int | None
    irr_monthly: float | None
    irr_annual: float | None


class EvaluationRead(BaseModel):
    """Monthly cash flows and totals of every plan, and the analyses that were asked for (the
    others are left out of the answer)."""

    plans: list[PlanResultRead]
    cheapest: str
    assumptions: FinanceAssumptionsRead
    monte_carlo: MonteCarloRead | None = None
    sensitivity: SensitivityRead | None = None
    break_even: ScenarioBreakEvenRead | None = None
    buy_versus_rent: BuyVersusRentRead | None = None
    catalog_version: int | None = Field(
        None, description="The catalog version recommended plans are priced with."
    )
    as_of: dt.datetime | None = None


def evaluation_fields(
    evaluation: Evaluation,
    monte_carlo: MonteCarloResult | None = None,
    sensitivity: Sensitivity | None = None,
    break_even: BreakEven | None = None,
    buy_versus_rent: BuyVersusRent | None = None,
) -> dict[str, Any]:
    """The fields of an evaluation answer: the plans read from the engine's results, and each
    analysis only where it ran."""
    assumptions = evaluation.scenario.assumptions
    fields: dict[str, Any] = {
        "plans": [PlanResultRead.model_validate(plan) for plan in evaluation.plans],
        "cheapest": evaluation.cheapest().name,
        "assumptions": FinanceAssumptionsRead(
            horizon_months=assumptions.horizon_months,
            discount_rate_annual=assumptions.discount_rate_annual,
            monthly_discount_rate=evaluation.monthly_discount_rate,
            residual_value=assumptions.residual_value.value,
        ),
    }
    if monte_carlo is not None:
        fields["monte_carlo"] = MonteCarloRead.model_validate(monte_carlo)
    if sensitivity is not None:
        fields["sensitivity"] = SensitivityRead.model_validate(sensitivity)
    if break_even is not None:
        fields["break_even"] = ScenarioBreakEvenRead.model_validate(break_even)
    if buy_versus_rent is not None:
        fields["buy_versus_rent"] = BuyVersusRentRead.model_validate(buy_versus_rent)
    return fields


class SavedEvaluationRead(EvaluationRead):
    """The evaluation of a saved scenario's version, with the prices it recorded."""

    scenario_id: int
    version: int


class ComparisonRowRead(_FromResult):
    """A summary figure (`total_usd`) or a cost category, per plan, and its delta to the baseline."""

    key: str
    usd: list[Usd]
    delta_usd: list[Usd]
    changes: list[EnumText]


class ComparisonLineRead(ComparisonRowRead):
    """A cost line, per plan (null where a plan has no such line)."""

    category: EnumText | None


class ComparisonRead(_FromResult):
    labels: list[str]
    baseline: str
    summary: list[ComparisonRowRead]
    categories: list[ComparisonRowRead]
    lines: list[ComparisonLineRead]
