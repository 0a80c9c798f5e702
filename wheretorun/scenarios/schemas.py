"""Shapes of `/v1/scenarios`: saved, versioned finance scenarios and their evaluation.

A plan is either written out (`kind: "custom"`, the finance engine's cost structure: capex,
opex, usage, instances, owned capacity) or taken from a recommendation (`kind: "recommended"`:
a workload and which option to take). Field names follow `wheretorun.engine.finance`.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictInt

from wheretorun.bounds import MAX_HORIZON_MONTHS, MAX_TOKENS_PER_MONTH, NO_NUL, LongText, Name, distinct
from wheretorun.fields import SAFE_INT_MAX, UtcDateTime, number
from wheretorun.services.recommendation_schemas import AssumptionsIn, ConstraintsIn, WorkloadIn

__all__ = [
    "BreakEvenIn",
    "MonteCarloIn",
    "ScenarioCreate",
    "ScenarioEvaluateRequest",
    "ScenarioRead",
    "ScenarioUpdate",
    "ScenarioVersionRead",
    "SensitivityIn",
]

Category = Literal[
    "hardware",
    "compute",
    "tokens",
    "power",
    "colocation",
    "staff",
    "maintenance",
    "network",
    "storage",
    "software",
    "other",
]


# Money bounds: a trillion dollars is about the yearly capital spending of every hyperscaler
# together; no single purchase, monthly bill or unit price of a plan comes near it.
CapexUsd = Annotated[float, number(0.0, 1e12)]
UsdPerMonth = Annotated[float, number(0.0, 1e11)]
UsdPerUnit = Annotated[float, number(0.0, 1e6)]  # per unit consumed: $1M per million tokens
UsdPerHour = Annotated[float, number(0.0, 100_000.0)]  # ~1,000x the priciest cloud instance
Month = Annotated[StrictInt, Field(ge=1, le=600)]
# Straight-line depreciation: one month (the engine's floor) to 50 years (buildings).
DepreciationYears = Annotated[float, number(1 / 12, 50.0)]
Fraction = Annotated[float, number(0.0, 1.0)]
# Utilisation below 1% of rated capacity is not a plan; at 0 the capacity needed is infinite.
Utilisation = Annotated[float, number(0.01, 1.0)]
# Escalation per year: -99% to +100% (the engine's range).
Escalation = Annotated[float, number(-0.99, 1.0)]
# Whole units: a million servers or instances is ~5x the largest cluster reported.
Units = Annotated[StrictInt, Field(ge=0, le=1_000_000)]
# Tokens one unit serves in a month: 10^4 (a CPU at 0.004 tokens/s) to 10^15 (~40,000x one
# H100's ~10^4 tokens/s over a month).
TokensPerUnit = Annotated[float, number(1e4, 1e15)]
# Lines of one kind in one plan: a detailed bill of materials has tens of lines, not thousands.
MAX_LINES = 50
MAX_PLANS = 5
"""Plans in one scenario: each is a panel of the cost-stack chart (~0.25 s to draw) and a column of
the comparison; five side by side is already more than a reader compares at once."""
MAX_SCENARIO_LINES = 500
"""Cost lines in all plans of one scenario: each costs ~50 us per evaluation over 240 months, and
a sensitivity analysis evaluates the scenario ~60 times (bench/bounded_work.py)."""


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CapexItemIn(Body):
    name: Name
    amount_usd: CapexUsd
    month: Month = 1
    depreciation_years: DepreciationYears = 5.0
    residual_fraction: Fraction = 0.0
    category: Category = "hardware"


class OpexLineIn(Body):
    name: Name
    usd_per_month: UsdPerMonth
    category: Category = "other"
    start_month: Month = 1
    end_month: Month | None = None
    annual_escalation: Escalation = 0.0


class UsageLineIn(Body):
    name: Name
    usd_per_unit: UsdPerUnit
    unit: Name = "million tokens"
    # Units per million tokens: > 0 (a line that consumes nothing is no line) to a million.
    units_per_million_tokens: float = number(0.0, 1e6, low_open=True, default=1.0)
    category: Category = "tokens"


class InstanceLineIn(Body):
    name: Name
    usd_per_instance_hour: UsdPerHour
    tokens_per_month_per_instance: TokensPerUnit
    utilisation: Utilisation = 1.0
    minimum_instances: Units = 0
    hours_per_month: float = number(0.0, 744.0, low_open=True, default=730.0)  # 31 days x 24 h
    fallback_usd_per_instance_hour: UsdPerHour | None = None
    spot_availability: Fraction = 1.0
    category: Category = "compute"


class UnitOpexLineIn(Body):
    name: Name
    usd_per_unit_month: UsdPerMonth
    category: Category = "other"
    annual_escalation: Escalation = 0.0


class OwnedCapacityIn(Body):
    tokens_per_month_per_unit: TokensPerUnit
    capex_usd_per_unit: CapexUsd
    burst_usd_per_million_tokens: UsdPerUnit
    name: Name = "servers"
    lead_time_months: Annotated[StrictInt, Field(ge=0, le=60)] = 0
    utilisation: Utilisation = 1.0
    initial_units: Units = 0
    max_units: Annotated[StrictInt, Field(ge=1, le=1_000_000)] | None = Field(
        None, description="At least 1 and at least initial_units."
    )
    unit_opex: list[UnitOpexLineIn] = Field([], max_length=MAX_LINES)
    depreciation_years: DepreciationYears = 5.0
    residual_fraction: Fraction = 0.0


class CustomPlanIn(Body):
    """A plan written out as its cost structure."""

    kind: Literal["custom"] = "custom"
    name: Name
    capex: list[CapexItemIn] = Field([], max_length=MAX_LINES)
    opex: list[OpexLineIn] = Field([], max_length=MAX_LINES)
    usage: list[UsageLineIn] = Field([], max_length=MAX_LINES)
    instances: list[InstanceLineIn] = Field([], max_length=MAX_LINES)
    capacity: OwnedCapacityIn | None = None


class RecommendedPlanIn(Body):
    """A plan taken from a recommendation: the best option of a kind for this workload."""

    kind: Literal["recommended"]
    name: Name | None = Field(None, description="Default: the option's own label.")
    option: Literal["hosted_api", "cloud", "owned", "local"]
    workload: WorkloadIn
    constraints: ConstraintsIn = ConstraintsIn()
    assumptions: AssumptionsIn = AssumptionsIn()


PlanIn = Annotated[CustomPlanIn | RecommendedPlanIn, Field(discriminator="kind")]
TokensPerMonth = Annotated[float, number(0.0, MAX_TOKENS_PER_MONTH)]


class TrafficIn(Body):
    tokens_per_month: TokensPerMonth = Field(0.0, description="Tokens in month 1.")
    growth_per_month: float = number(
        -0.99,
        1.0,
        default=0.0,
        description="0.05 = +5% a month, compounded; the last month may carry at most 1e6 times the first.",
    )
    monthly_tokens: list[TokensPerMonth] | None = Field(
        None,
        max_length=MAX_HORIZON_MONTHS,
        description="An explicit series from month 1 instead of a growth rate (one value per month).",
    )


class FinanceAssumptionsIn(Body):
    horizon_months: Annotated[StrictInt, Field(ge=1, le=MAX_HORIZON_MONTHS)] = 36
    discount_rate_annual: float = number(0.0, 1.0, default=0.08, description="Cost of capital, 0 to 1.")
    residual_value: Literal["book_value", "none"] = "book_value"


class ScenarioBody(Body):
    description: LongText | None = None
    traffic: TrafficIn
    assumptions: FinanceAssumptionsIn = FinanceAssumptionsIn()
    plans: list[PlanIn] = Field(
        min_length=1, max_length=MAX_PLANS, description=f"The ways to pay, compared (at most {MAX_PLANS})."
    )
    as_of: UtcDateTime | None = Field(None, description="Prices as of this moment (recommended plans).")


# A hosted API at $0.60 per million tokens against owned servers bought as traffic grows.
_SCENARIO_EXAMPLE: dict[str, Any] = {
    "name": "70B serving",
    "tags": ["llm", "finance"],
    "traffic": {"tokens_per_month": 5e9, "growth_per_month": 0.05},
    "assumptions": {"horizon_months": 36, "discount_rate_annual": 0.08},
    "plans": [
        {"kind": "custom", "name": "hosted", "usage": [{"name": "tokens", "usd_per_unit": 0.6}]},
        {
            "kind": "custom",
            "name": "owned",
            "capacity": {
                "tokens_per_month_per_unit": 2e10,
                "capex_usd_per_unit": 300000,
                "burst_usd_per_million_tokens": 0.6,
                "lead_time_months": 3,
                "initial_units": 1,
                "depreciation_years": 4,
                "residual_fraction": 0.2,
                "unit_opex": [{"name": "power", "usd_per_unit_month": 900, "category": "power"}],
            },
            "opex": [{"name": "staff", "usd_per_month": 4500, "category": "staff"}],
        },
    ],
}
SCENARIO_EXAMPLES: list[dict[str, Any]] = [
    _SCENARIO_EXAMPLE,
    {
        "name": "chat assistant: hosted or rented",
        "traffic": {"tokens_per_month": 2e9},
        "plans": [
            {
                "kind": "recommended",
                "option": "hosted_api",
                "workload": {
                    "kind": "inference",
                    "model": "llama-3.1-8b",
                    "requests_per_day": 20000,
                    "input_tokens": 1000,
                    "output_tokens": 250,
                },
            },
            {
                "kind": "recommended",
                "option": "cloud",
                "workload": {
                    "kind": "inference",
                    "model": "llama-3.1-8b",
                    "requests_per_day": 20000,
                    "input_tokens": 1000,
                    "output_tokens": 250,
                },
            },
        ],
    },
]


Tag = Annotated[str, Field(min_length=1, max_length=50, pattern=NO_NUL)]


class ScenarioCreate(ScenarioBody):
    model_config = ConfigDict(
        extra="forbid", frozen=True, json_schema_extra={"examples": [*SCENARIO_EXAMPLES]}
    )

    name: Name
    tags: Annotated[list[Tag], Field(max_length=20), AfterValidator(distinct)] = []


class ScenarioUpdate(ScenarioCreate):
    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        json_schema_extra={
            "examples": [
                {
                    **_SCENARIO_EXAMPLE,
                    "traffic": {"tokens_per_month": 5e9, "growth_per_month": 0.08},
                    "note": "faster growth",
                }
            ]
        },
    )

    note: Annotated[str, Field(max_length=500, pattern=NO_NUL)] | None = Field(
        None, description="What this version changes."
    )


class ScenarioVersionRead(BaseModel):
    version: int
    created_at: dt.datetime
    catalog_version_id: int | None
    note: str | None
    body: dict[str, Any]


class ScenarioRead(BaseModel):
    id: int
    name: str
    tags: list[str]
    version: int = Field(description="The current version; send it back as If-Match to update.")
    created_at: dt.datetime
    updated_at: dt.datetime
    catalog_version_id: int | None
    body: dict[str, Any]


# The inputs an analysis can move (`engine/finance/inputs.py`).
InputName = Literal[
    "traffic",
    "growth_per_month",
    "discount_rate_annual",
    "horizon_months",
    "utilisation",
    "spot_availability",
    "price",
    "electricity",
    "price:hardware",
    "price:compute",
    "price:tokens",
    "price:power",
    "price:colocation",
    "price:staff",
    "price:maintenance",
    "price:network",
    "price:storage",
    "price:software",
    "price:other",
]
# Values an input takes: growth and escalation from -0.99, multipliers up to 1,000x (a price or a
# traffic a thousand times the plan's is beyond any planning range), horizons up to 600 months.
InputValue = Annotated[float, number(-0.99, 1_000.0)]


class DistributionIn(Body):
    input: InputName = Field(description="The input to draw: traffic, growth_per_month, price, ...")
    kind: Literal["triangular", "lognormal", "uniform"]
    low: InputValue
    high: InputValue = Field(description="Above `low`; lognormal: `low` above 0.")
    mode: InputValue | None = Field(None, description="Triangular: between `low` and `high`.")
    plan: Name | None = None


MAX_EVALUATION_WORK = 15_000_000
"""Draws (Monte Carlo samples, break-even points) x cost lines x months evaluated by one analysis,
at most: ~40-100 ns each on the 2-core CI machine, so an analysis stays within ~1.5 s
(bench/bounded_work.py)."""


class MonteCarloIn(Body):
    samples: Annotated[StrictInt, Field(ge=1, le=200_000)] = Field(
        10_000,
        description=f"Draws; samples x cost lines x horizon_months at most {MAX_EVALUATION_WORK:,}.",
    )
    seed: Annotated[StrictInt, Field(ge=0, le=SAFE_INT_MAX)] = 0
    distributions: list[DistributionIn] = Field(min_length=1, max_length=30)
    metric: Literal["total_usd", "npv_usd"] = "total_usd"


class SensitivityRangeIn(Body):
    input: InputName
    low: InputValue
    high: InputValue
    plan: Name | None = None


class SensitivityIn(Body):
    ranges: list[SensitivityRangeIn] | None = Field(
        None, max_length=30, description="Default: a standard set."
    )
    metric: Literal["total_usd", "npv_usd"] = "total_usd"


class BreakEvenIn(Body):
    plan_a: Name
    plan_b: Name
    variable: Literal["volume", "utilisation", "horizon_months"] = "volume"
    # volume: tokens a month (at most MAX_TOKENS_PER_MONTH); utilisation: (0, 1]; horizon: months.
    low: Annotated[float, number(0.0, MAX_TOKENS_PER_MONTH)] | None = None
    high: Annotated[float, number(0.0, MAX_TOKENS_PER_MONTH)] | None = None
    points: Annotated[StrictInt, Field(ge=3, le=1000)] = Field(
        61, description=f"Grid points; points x cost lines x horizon_months at most {MAX_EVALUATION_WORK:,}."
    )
    metric: Literal["total_usd", "npv_usd"] = "total_usd"


class AnalysesIn(Body):
    monte_carlo: MonteCarloIn | None = None
    sensitivity: SensitivityIn | None = None
    break_even: BreakEvenIn | None = None
    buy_versus_rent: tuple[Name, Name] | None = Field(
        None, description="[buy plan, rent plan]: payback and IRR."
    )


ANALYSES_EXAMPLE: dict[str, Any] = {
    "monte_carlo": {
        "samples": 2000,
        "seed": 7,
        "distributions": [{"input": "traffic", "kind": "lognormal", "low": 0.7, "high": 1.5}],
    },
    "break_even": {"plan_a": "hosted", "plan_b": "owned"},
    "buy_versus_rent": ["owned", "hosted"],
}


class ScenarioEvaluateRequest(ScenarioBody, AnalysesIn):
    """An unsaved scenario (the same body as create) plus the analyses to run on it."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        json_schema_extra={"examples": [_SCENARIO_EXAMPLE, {**_SCENARIO_EXAMPLE, **ANALYSES_EXAMPLE}]},
    )

    name: Name = "unsaved"
    tags: Annotated[list[Tag], Field(max_length=20), AfterValidator(distinct)] = []
