"""Shapes of `/v1/scenarios`: saved, versioned finance scenarios and their evaluation.

A plan is either written out (`kind: "custom"`, the finance engine's cost structure: capex,
opex, usage, instances, owned capacity) or taken from a recommendation (`kind: "recommended"`:
a workload and which option to take). Field names follow `wheretorun.engine.finance`.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from wheretorun.fields import UtcDateTime
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
Money = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Month = Annotated[int, Field(ge=1, le=600)]


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CapexItemIn(Body):
    name: str
    amount_usd: Money
    month: Month = 1
    depreciation_years: float = Field(5.0, gt=0, le=50)
    residual_fraction: float = Field(0.0, ge=0, le=1)
    category: Category = "hardware"


class OpexLineIn(Body):
    name: str
    usd_per_month: Money
    category: Category = "other"
    start_month: Month = 1
    end_month: Month | None = None
    annual_escalation: float = Field(0.0, gt=-1, le=10)


class UsageLineIn(Body):
    name: str
    usd_per_unit: Money
    unit: str = "million tokens"
    units_per_million_tokens: float = Field(1.0, ge=0, allow_inf_nan=False)
    category: Category = "tokens"


class InstanceLineIn(Body):
    name: str
    usd_per_instance_hour: Money
    tokens_per_month_per_instance: float = Field(gt=0, allow_inf_nan=False)
    utilisation: float = Field(1.0, gt=0, le=1)
    minimum_instances: int = Field(0, ge=0)
    hours_per_month: float = Field(730.0, gt=0, le=744)
    fallback_usd_per_instance_hour: Money | None = None
    spot_availability: float = Field(1.0, ge=0, le=1)
    category: Category = "compute"


class UnitOpexLineIn(Body):
    name: str
    usd_per_unit_month: Money
    category: Category = "other"
    annual_escalation: float = Field(0.0, gt=-1, le=10)


class OwnedCapacityIn(Body):
    tokens_per_month_per_unit: float = Field(gt=0, allow_inf_nan=False)
    capex_usd_per_unit: Money
    burst_usd_per_million_tokens: Money
    name: str = "servers"
    lead_time_months: int = Field(0, ge=0, le=60)
    utilisation: float = Field(1.0, gt=0, le=1)
    initial_units: int = Field(0, ge=0)
    max_units: int | None = Field(None, ge=0)
    unit_opex: list[UnitOpexLineIn] = []
    depreciation_years: float = Field(5.0, gt=0, le=50)
    residual_fraction: float = Field(0.0, ge=0, le=1)


class CustomPlanIn(Body):
    """A plan written out as its cost structure."""

    kind: Literal["custom"] = "custom"
    name: str = Field(min_length=1, max_length=200)
    capex: list[CapexItemIn] = []
    opex: list[OpexLineIn] = []
    usage: list[UsageLineIn] = []
    instances: list[InstanceLineIn] = []
    capacity: OwnedCapacityIn | None = None


class RecommendedPlanIn(Body):
    """A plan taken from a recommendation: the best option of a kind for this workload."""

    kind: Literal["recommended"]
    name: str | None = Field(None, max_length=200, description="Default: the option's own label.")
    option: Literal["hosted_api", "cloud", "owned", "local"]
    workload: WorkloadIn
    constraints: ConstraintsIn = ConstraintsIn()
    assumptions: AssumptionsIn = AssumptionsIn()


PlanIn = Annotated[CustomPlanIn | RecommendedPlanIn, Field(discriminator="kind")]


class TrafficIn(Body):
    tokens_per_month: float = Field(0.0, ge=0, allow_inf_nan=False, description="Tokens in month 1.")
    growth_per_month: float = Field(0.0, gt=-1, le=10, description="0.05 = +5% a month.")
    monthly_tokens: list[Annotated[float, Field(ge=0, allow_inf_nan=False)]] | None = Field(
        None, description="An explicit series from month 1 instead of a growth rate."
    )


class FinanceAssumptionsIn(Body):
    horizon_months: int = Field(36, ge=1, le=240)
    discount_rate_annual: float = Field(0.08, gt=-1, le=1, description="Cost of capital, e.g. 0.08.")
    residual_value: Literal["book_value", "none"] = "book_value"


class ScenarioBody(Body):
    description: str | None = Field(None, max_length=2000)
    traffic: TrafficIn
    assumptions: FinanceAssumptionsIn = FinanceAssumptionsIn()
    plans: list[PlanIn] = Field(min_length=1, max_length=20)
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


class ScenarioCreate(ScenarioBody):
    model_config = ConfigDict(
        extra="forbid", frozen=True, json_schema_extra={"examples": [*SCENARIO_EXAMPLES]}
    )

    name: str = Field(min_length=1, max_length=200)
    tags: list[Annotated[str, Field(min_length=1, max_length=50)]] = Field([], max_length=20)


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

    note: str | None = Field(None, max_length=500, description="What this version changes.")


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


class DistributionIn(Body):
    input: str = Field(
        description="traffic, growth_per_month, utilisation, electricity, price, price:<category>, ..."
    )
    kind: Literal["triangular", "lognormal", "uniform"]
    low: float = Field(allow_inf_nan=False)
    high: float = Field(allow_inf_nan=False)
    mode: float | None = Field(None, allow_inf_nan=False)
    plan: str | None = None


class MonteCarloIn(Body):
    samples: int = Field(10_000, ge=1, le=200_000)
    seed: int = Field(0, ge=0)
    distributions: list[DistributionIn] = Field(min_length=1, max_length=30)
    metric: Literal["total_usd", "npv_usd"] = "total_usd"


class SensitivityRangeIn(Body):
    input: str
    low: float = Field(allow_inf_nan=False)
    high: float = Field(allow_inf_nan=False)
    plan: str | None = None


class SensitivityIn(Body):
    ranges: list[SensitivityRangeIn] | None = Field(None, description="Default: a standard set.")
    metric: Literal["total_usd", "npv_usd"] = "total_usd"


class BreakEvenIn(Body):
    plan_a: str
    plan_b: str
    variable: Literal["volume", "utilisation", "horizon_months"] = "volume"
    low: float | None = Field(None, allow_inf_nan=False)
    high: float | None = Field(None, allow_inf_nan=False)
    points: int = Field(61, ge=3, le=1001)
    metric: Literal["total_usd", "npv_usd"] = "total_usd"


class AnalysesIn(Body):
    monte_carlo: MonteCarloIn | None = None
    sensitivity: SensitivityIn | None = None
    break_even: BreakEvenIn | None = None
    buy_versus_rent: tuple[str, str] | None = Field(
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

    name: str = Field("unsaved", min_length=1, max_length=200)
    tags: list[Annotated[str, Field(min_length=1, max_length=50)]] = Field([], max_length=20)
