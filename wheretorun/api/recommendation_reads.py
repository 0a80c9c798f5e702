"""Response shapes of `/v1/recommendations` (money as exact decimal strings in USD)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, Field

__all__ = ["AssumptionRead", "RecommendationRead"]


class CostLineRead(BaseModel):
    name: str
    usd: Decimal
    note: str = ""


class SetupRead(BaseModel):
    model_id: str
    accelerator_id: str | None = None
    accelerator_count: int | None = None
    accelerators_per_replica: int | None = None
    replicas: int | None = None
    precision: str | None = None
    serving_engine: str | None = None
    provider: str | None = None
    region: str | None = None
    instance_type: str | None = None
    instance_count: int | None = None
    pricing_mode: str | None = None
    scaling: str | None = None
    offer_ids: list[int] = []
    api_price_id: int | None = None
    hosted_model_id: str | None = None


class HybridPartRead(BaseModel):
    role: str
    label: str
    units: int | None
    share_of_requests: float
    usd: Decimal


class OptionRead(BaseModel):
    rank: int
    option: str = Field(description="hosted_api | cloud | owned | local | hybrid")
    label: str
    setup: SetupRead
    total_usd: Decimal = Field(description="Over the horizon.")
    usd_per_month: Decimal | None
    usd_per_million_tokens: Decimal | None
    usd_per_run: Decimal | None
    capex_usd: Decimal
    opex_usd_per_month: Decimal
    breakdown: list[CostLineRead]
    utilisation: float | None
    ttft_ms: float | None
    tpot_ms: float | None
    headroom: float | None
    risks: list[str]
    rationale: str
    hybrid_parts: list[HybridPartRead] = []


class RejectedRead(BaseModel):
    reason: str
    count: int
    examples: list[str]


class BreakEvenPointRead(BaseModel):
    multiplier: float
    volume: float
    usd_per_month: dict[str, Decimal]
    winner: str


class CrossoverRead(BaseModel):
    multiplier: float
    volume: float
    from_label: str
    to_label: str


class BreakEvenRead(BaseModel):
    volume_unit: str
    current_volume: float
    compared: list[str]
    points: list[BreakEvenPointRead]
    crossovers: list[CrossoverRead]
    searched: list[float]
    summary: str


class AssumptionRead(BaseModel):
    value: Any
    source: str


class RecommendationRead(BaseModel):
    workload_kind: str
    options: list[OptionRead] = Field(description="Ranked, best (cheapest over the horizon) first.")
    best_per_option: dict[str, OptionRead]
    rejected: list[RejectedRead] = Field(description="Candidates rejected, grouped by the rule that did it.")
    break_even: BreakEvenRead | None
    assumptions: dict[str, AssumptionRead]
    catalog_version: int
    as_of: dt.datetime
    candidates_evaluated: int
    notes: list[str]
