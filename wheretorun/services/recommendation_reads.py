"""What the recommendation service answers (money as exact decimal strings in USD). Each read model
is built from the attributes of the engine value of the same name (`from_attributes`).

The HTTP API writes the answer from `RecommendationAnswer` instead: the same fields, holding the
engine's values themselves where they already have their read model's shape, so that they are
written without first being validated again into read models."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from wheretorun.engine.recommendation import BindingConstraint, PlanOption, RejectedGroup

__all__ = ["AssumptionRead", "OptionRead", "RecommendationAnswer", "RecommendationRead"]


class ReadModel(BaseModel):
    model_config = ConfigDict(from_attributes=True)


class CostLineRead(ReadModel):
    name: str
    usd: Decimal
    note: str = ""


class SetupRead(ReadModel):
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


class HybridPartRead(ReadModel):
    role: str
    label: str
    units: int | None
    share_of_requests: float
    usd: Decimal


class OptionRead(ReadModel):
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
    marginal_usd_per_million_tokens: Decimal | None = Field(
        default=None, description="Per million tokens without the fixed staff minimum."
    )
    marginal_usd_per_run: Decimal | None = Field(
        default=None, description="Per training run without the fixed staff minimum."
    )
    accelerator_hours_per_run: float | None = Field(
        default=None, description="Training: accelerator-hours of one whole run (overheads included)."
    )
    wall_clock_hours_per_run: float | None = None
    setting: str | None = Field(
        default=None, description="Training: recomputation, ZeRO stage, tensor-parallel degree, micro-batch."
    )
    uncertainty: str | None = None
    same_total: list[str] = Field(
        default=[], description="Other options of the same kind and provider at the same total, folded in."
    )
    usd_per_accelerator_hour: Decimal | None = Field(
        None,
        description="Cloud: the price paid per accelerator-hour in this pricing mode (spot with its "
        "interruption overhead); owned and local: the all-in cost per accelerator-hour of the horizon.",
    )
    price_source: str | None = Field(
        None,
        description="Where the price behind `usd_per_accelerator_hour` comes from (catalog source, "
        "commitment term, or the user's own discount).",
    )


class RejectedRead(ReadModel):
    reason: str
    count: int
    examples: list[str]


class BreakEvenPointRead(ReadModel):
    multiplier: float
    volume: float
    # the engine keeps (plan label, cost) pairs in the order of `BreakEven.compared`
    usd_per_month: Annotated[dict[str, Decimal], BeforeValidator(dict)]
    winner: str


class CrossoverRead(ReadModel):
    multiplier: float
    volume: float
    from_label: str
    to_label: str


class BreakEvenRead(ReadModel):
    volume_unit: str
    current_volume: float
    compared: list[str]
    points: list[BreakEvenPointRead]
    crossovers: list[CrossoverRead]
    searched: list[float]
    summary: str


class AssumptionRead(ReadModel):
    # frozen: the reads of an assumptions value are shared by the answers that use it
    model_config = ConfigDict(from_attributes=True, frozen=True)

    value: Any
    source: str


class BindingConstraintRead(ReadModel):
    constraint: str
    relaxed_to: str
    cheapest_label: str | None
    cheapest_total_usd: Decimal | None
    cheapest_figure: str | None


class RecommendationRead(ReadModel):
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
    binding_constraints: list[BindingConstraintRead] = Field(
        default=[],
        description="When no option is feasible: each constraint that binds and the cheapest option "
        "that relaxing it alone would admit.",
    )


@dataclass(frozen=True, slots=True)
class RecommendationAnswer:
    """`RecommendationRead` as the HTTP API writes it (`TypeAdapter(RecommendationAnswer).dump_json`):
    its fields in its order, holding the engine's `PlanOption`, `RejectedGroup` and
    `BindingConstraint` where the read holds `OptionRead`, `RejectedRead` and
    `BindingConstraintRead`. Those engine values have their read model's fields in the same order
    and of the same types, so the JSON is the read model's to the byte
    (tests/unit/test_recommendation_reads.py checks the fields' names and order, and the bytes of
    answers with every part); validating them into read models and dropping them again cost ~1.3M
    instructions of the 8B prototype's ~25.4M through the API (2026-12-05)."""

    workload_kind: str
    options: tuple[PlanOption, ...]
    best_per_option: dict[str, PlanOption]
    rejected: tuple[RejectedGroup, ...]
    break_even: BreakEvenRead | None  # the engine keeps its points' costs as pairs, not a mapping
    assumptions: dict[str, AssumptionRead]
    catalog_version: int
    as_of: dt.datetime
    candidates_evaluated: int
    notes: tuple[str, ...]
    binding_constraints: tuple[BindingConstraint, ...] = ()
