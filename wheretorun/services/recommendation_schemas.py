"""Request shapes of `POST /v1/recommendations` (the contract of issue 4) and their translation to
the engine's workload values. Responses are in `recommendation_reads.py`."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictInt, model_validator

from wheretorun.bounds import (
    MAX_CONTEXT_TOKENS,
    MAX_HORIZON_MONTHS,
    MAX_MODELS,
    MAX_REQUESTS_PER_DAY,
    MAX_TOTAL_GROWTH,
    MAX_TOTAL_TOKENS,
    Id,
    Name,
    NameList,
    distinct,
)
from wheretorun.fields import UtcDateTime, number

__all__ = [
    "AssumptionsIn",
    "BatchWorkloadIn",
    "ConstraintsIn",
    "InferenceWorkloadIn",
    "RecommendationCreate",
    "TrainingWorkloadIn",
]

OptionName = Literal["hosted_api", "cloud", "owned", "local", "hybrid"]


Tokens = Annotated[StrictInt, Field(ge=1, le=MAX_CONTEXT_TOKENS)]
TotalTokens = Annotated[float, number(0.0, MAX_TOTAL_TOKENS)]
# A deadline: 0.01 h (36 s; no batch or training job finishes faster) to 10 years.
DeadlineHours = Annotated[float, number(0.01, 87_600.0)]
# Latency targets: 0.01 ms (below any measured time per output token) to one hour.
LatencyMs = Annotated[float, number(0.01, 3_600_000.0)]


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _given(name: str, kind: str) -> dict[str, Any]:
    """JSON Schema: property `name` is present and not null (a JSON `kind`)."""
    return {"required": [name], "properties": {name: {"type": kind}}}


def _exactly_one(first: tuple[str, str], second: tuple[str, str]) -> dict[str, Any]:
    """JSON Schema for "exactly one of these two (name, JSON type) is given", as the validators
    below check it (null counts as not given)."""
    return {"oneOf": [_given(*first), _given(*second)]}


def _not_both(first: tuple[str, str], second: tuple[str, str]) -> dict[str, Any]:
    """JSON Schema for "not both of these are given"."""
    return {"not": {"allOf": [_given(*first), _given(*second)]}}


_MODEL_OR_MODELS = _exactly_one(("model", "string"), ("models", "array"))


class ModelChoice(Body):
    """`model` for one model, or `models` for a set of acceptable ones (best first)."""

    model: Id | None = Field(None, description="A catalog model id (open or hosted).")
    models: (
        Annotated[list[Id], Field(min_length=1, max_length=MAX_MODELS), AfterValidator(distinct)] | None
    ) = Field(
        None, description=f"Acceptable catalog models, best first (at most {MAX_MODELS}; repeats dropped)."
    )

    @model_validator(mode="after")
    def _one_way_to_name_models(self) -> ModelChoice:
        if (self.model is None) == (self.models is None):
            raise ValueError("give either `model` or `models`")
        return self

    @property
    def model_ids(self) -> tuple[str, ...]:
        return (self.model,) if self.model is not None else tuple(self.models or ())


class InferenceWorkloadIn(ModelChoice):
    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        json_schema_extra={
            "allOf": [
                _MODEL_OR_MODELS,
                _exactly_one(("requests_per_day", "number"), ("requests_per_second", "number")),
                _not_both(("tpot_ms", "number"), ("tokens_per_s_per_user", "number")),
            ]
        },
    )

    kind: Literal["inference"]
    requests_per_day: Annotated[float, number(0.0, MAX_REQUESTS_PER_DAY)] | None = None
    requests_per_second: Annotated[float, number(0.0, MAX_REQUESTS_PER_DAY / 86_400)] | None = None
    input_tokens: Tokens = Field(description="Average input tokens per request.")
    cached_input_tokens: Annotated[StrictInt, Field(ge=0, le=MAX_CONTEXT_TOKENS)] = Field(
        0, description="Of the input, tokens served from a prompt cache."
    )
    output_tokens: Tokens = Field(description="Average output tokens per request.")
    # The busiest hour against the average: 1,000 is a service idle but for one burst a day.
    peak_to_average: float = number(1.0, 1_000.0, default=1.0)
    hourly_profile: list[Annotated[float, number(0.0, 1e9)]] | None = Field(
        None, min_length=24, max_length=24, description="24 relative loads, hour 0 to 23 (any scale)."
    )
    # -99% to +100% a month (doubling every month); over the horizon see MAX_TOTAL_GROWTH.
    growth_per_month: float = number(
        -0.99,
        1.0,
        default=0.0,
        description="0.05 = +5% a month, compounded; the last month's traffic may be at most "
        f"{MAX_TOTAL_GROWTH:.0e} times the first's.",
    )
    ttft_ms: LatencyMs | None = None
    tpot_ms: LatencyMs | None = None
    tokens_per_s_per_user: Annotated[float, number(0.001, 100_000.0)] | None = Field(
        None, description="Alternative to tpot_ms: 1000 / tpot_ms."
    )
    redundancy: Annotated[StrictInt, Field(ge=0, le=16)] = Field(
        0, description="Spare replicas for failures (N+1 = 1)."
    )

    @model_validator(mode="after")
    def _one_traffic_figure(self) -> InferenceWorkloadIn:
        if (self.requests_per_day is None) == (self.requests_per_second is None):
            raise ValueError("give either `requests_per_day` or `requests_per_second`")
        if self.tpot_ms is not None and self.tokens_per_s_per_user is not None:
            raise ValueError("give `tpot_ms` or `tokens_per_s_per_user`, not both")
        if self.cached_input_tokens > self.input_tokens:
            raise ValueError("`cached_input_tokens` cannot exceed `input_tokens`")
        return self

    @property
    def daily_requests(self) -> float:
        if self.requests_per_day is not None:
            return self.requests_per_day
        return (self.requests_per_second or 0.0) * 86_400

    @property
    def tpot_target_ms(self) -> float | None:
        if self.tokens_per_s_per_user is not None:
            return 1000 / self.tokens_per_s_per_user
        return self.tpot_ms


class BatchWorkloadIn(ModelChoice):
    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_extra=_MODEL_OR_MODELS)

    kind: Literal["batch"]
    input_tokens_total: TotalTokens
    output_tokens_total: TotalTokens
    deadline_hours: DeadlineHours
    input_tokens_per_request: Tokens = 1024
    output_tokens_per_request: Tokens = 256


class TrainingWorkloadIn(Body):
    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        json_schema_extra=_exactly_one(("tokens", "number"), ("dataset_tokens", "number")),
    )

    kind: Literal["training"]
    model: Id
    method: Literal["full", "lora", "qlora"] = "full"
    tokens: Annotated[float, number(1.0, MAX_TOTAL_TOKENS)] | None = Field(
        None, description="Tokens per run, epochs included."
    )
    dataset_tokens: Annotated[float, number(1.0, MAX_TOTAL_TOKENS)] | None = Field(
        None, description="Alternative to `tokens`: with `epochs` (their product at most 1e15)."
    )
    # A thousandth of the dataset (a smoke run) to 1,000 passes over it.
    epochs: float = number(0.001, 1_000.0, default=1.0)
    deadline_hours: DeadlineHours | None = None
    # One run a century (fewer than one in the longest horizon) to one run an hour, every hour of the year.
    runs_per_year: float = number(0.01, 8_760.0, default=1.0)
    sequence_length: Tokens = 2048

    @model_validator(mode="after")
    def _one_token_figure(self) -> TrainingWorkloadIn:
        if (self.tokens is None) == (self.dataset_tokens is None):
            raise ValueError("give either `tokens` or `dataset_tokens` (with `epochs`)")
        return self

    @property
    def model_ids(self) -> tuple[str, ...]:
        return (self.model,)

    @property
    def tokens_per_run(self) -> float:
        return self.tokens if self.tokens is not None else (self.dataset_tokens or 0.0) * self.epochs


WorkloadIn = Annotated[
    InferenceWorkloadIn | BatchWorkloadIn | TrainingWorkloadIn, Field(discriminator="kind")
]

# Budgets: $10^12 a month or of capex is about the yearly capital spending of all hyperscalers.
UsdBudget = Annotated[float, number(0.0, 1e12)]


class ConstraintsIn(Body):
    on_premises_only: StrictBool = Field(
        False, description="Data must stay on premises: owned or local only."
    )
    allowed_providers: NameList = []
    excluded_providers: NameList = []
    allowed_regions: NameList = []
    allowed_accelerators: NameList = Field([], description="Accelerator ids or aliases.")
    excluded_accelerators: NameList = Field([], description="Accelerator ids or aliases.")
    allowed_options: Annotated[list[OptionName], Field(max_length=5), AfterValidator(distinct)] = []
    min_precision: Name | None = Field(
        None, description="Lowest weight precision allowed, e.g. fp8 (no int4)."
    )
    max_usd_per_month: UsdBudget | None = None
    max_capex_usd: UsdBudget | None = None
    include_suspect_prices: StrictBool = Field(
        False,
        description="Also plan with prices the catalog flags as suspect (far below the other providers of "
        "the same part or model, a shut-down provider, a deprecated model, ...). Left out by default and "
        "counted under the `suspect_price` rejection.",
    )


class ReservedDiscountIn(Body):
    one_year: float = Field(ge=0, lt=1, allow_inf_nan=False, strict=True)
    three_year: float = Field(ge=0, lt=1, allow_inf_nan=False, strict=True)


Fraction = Annotated[float, number(0.0, 1.0)]
StaffUsdPerMonth = Annotated[float, number(0.0, 10_000_000.0)]
Discount = Annotated[float, Field(ge=0, lt=1, allow_inf_nan=False, strict=True)]  # 0.3 = 30% off


class AssumptionsIn(Body):
    """Overrides of the money model's defaults; every default and its source is listed at
    `GET /v1/recommendations/assumptions`. Fractions are 0-1 (0.08 = 8%). The bounds are the
    engine's (`engine/assumptions.py`)."""

    horizon_months: Annotated[StrictInt, Field(ge=1, le=MAX_HORIZON_MONTHS)] | None = None
    # A calendar month: 28 days (672 h) to 31 days (744 h).
    hours_per_month: Annotated[float, number(672.0, 744.0)] | None = None
    electricity_usd_per_kwh: Annotated[float, number(0.0, 10.0)] | None = None
    pue: Annotated[float, number(1.0, 3.0)] | None = None
    colocation_usd_per_kw_month: Annotated[float, number(0.0, 10_000.0)] | None = None
    server_overhead_fraction: Annotated[float, number(0.0, 10.0)] | None = None
    cluster_network_fraction: Annotated[float, number(0.0, 0.9)] | None = None
    # One month to 20 years (hardware is written off over 3-6 years; 20 covers buildings-grade assets).
    depreciation_years: Annotated[float, number(1 / 12, 20.0)] | None = None
    residual_value_fraction: Fraction | None = None
    cost_of_capital_annual: Fraction | None = None
    maintenance_fraction_annual: Fraction | None = None
    operations_staff_usd_per_month: StaffUsdPerMonth | None = None
    cloud_staff_usd_per_month: StaffUsdPerMonth | None = None
    hosted_staff_usd_per_month: StaffUsdPerMonth | None = None
    staff_usd_per_fte_month: StaffUsdPerMonth | None = None
    accelerators_per_staff_fte: Annotated[float, number(1.0, 1_000_000.0)] | None = None
    target_utilisation: Annotated[float, number(0.01, 1.0)] | None = None  # plan for at least 1% of capacity
    spot_interruption_overhead: Annotated[float, number(0.0, 5.0)] | None = None
    spot_reclaims_per_instance_month: Annotated[float, number(0.0, 100.0)] | None = None
    spot_replacement_hours: Annotated[float, number(0.0, 720.0)] | None = None
    checkpoint_interval_hours: Annotated[float, number(0.0, 8_760.0)] | None = None
    reserved_1y_discount: Annotated[float, Field(ge=0, lt=1, allow_inf_nan=False, strict=True)] | None = (
        Field(
            None,
            description="Your own 1-year discount for every provider (else the catalog's commitment terms).",
        )
    )
    reserved_3y_discount: Annotated[float, Field(ge=0, lt=1, allow_inf_nan=False, strict=True)] | None = (
        Field(
            None,
            description="Your own 3-year discount for every provider (else the catalog's commitment terms).",
        )
    )
    reserved_discounts_by_provider: dict[Name, ReservedDiscountIn] | None = Field(
        None,
        max_length=50,
        description="Your own (negotiated) 1- and 3-year discounts per provider; they take precedence over "
        "the catalog's commitment terms and are labelled as yours.",
    )
    hardware_lead_time_months: Annotated[StrictInt, Field(ge=0, le=60)] | None = None
    base_server_power_w: Annotated[float, number(0.0, 100_000.0)] | None = None
    training_gpu_power_fraction: Annotated[float, number(0.01, 1.0)] | None = None  # of TDP; idle draws more
    serving_engine: Literal["vllm", "tensorrt-llm", "sglang", "tgi", "llama.cpp"] | None = None
    accelerators_per_sxm_server: Annotated[StrictInt, Field(ge=1, le=64)] | None = None
    accelerators_per_pcie_server: Annotated[StrictInt, Field(ge=1, le=64)] | None = None
    # A job spans at most the largest cluster reported (xAI Colossus, 200,000 GPUs).
    max_accelerators_per_job: Annotated[StrictInt, Field(ge=1, le=200_000)] | None = None
    hosted_batch_completion_hours: Annotated[float, number(0.01, 8_760.0)] | None = None
    host_vm_usd_per_accelerator_hour: Annotated[float, number(0.0, 1_000.0)] | None = None


# Literal copies of examples/chat-assistant-70b.yaml, nightly-batch-summaries.yaml and
# lora-finetune-8b.yaml (tests/api/test_openapi_contract.py keeps them equal).
_RECOMMENDATION_EXAMPLES: list[dict[str, Any]] = [
    {
        "workload": {
            "kind": "inference",
            "models": ["llama-3.3-70b", "llama-3.1-70b"],
            "requests_per_day": 200000,
            "input_tokens": 1500,
            "cached_input_tokens": 500,
            "output_tokens": 300,
            "peak_to_average": 3,
            "growth_per_month": 0.03,
            "ttft_ms": 1000,
            "tpot_ms": 50,
            "redundancy": 1,
        },
        "constraints": {"excluded_providers": ["vast"], "min_precision": "fp8"},
        "assumptions": {"horizon_months": 36},
    },
    {
        "workload": {
            "kind": "batch",
            "models": ["llama-3.1-8b", "llama-3.3-70b"],
            "input_tokens_total": 2000000000,
            "output_tokens_total": 200000000,
            "deadline_hours": 24,
        },
        "constraints": {"allowed_options": ["hosted_api", "cloud"]},
    },
    {
        "workload": {
            "kind": "training",
            "model": "llama-3.1-8b",
            "method": "lora",
            "tokens": 1500000000,
            "deadline_hours": 48,
            "runs_per_year": 12,
        },
        "assumptions": {"horizon_months": 24},
    },
]


class RecommendationCreate(Body):
    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        json_schema_extra={
            "examples": [*_RECOMMENDATION_EXAMPLES],
            **_not_both(("as_of", "string"), ("catalog_version", "integer")),
        },
    )

    workload: WorkloadIn
    constraints: ConstraintsIn = ConstraintsIn()
    assumptions: AssumptionsIn = AssumptionsIn()
    as_of: UtcDateTime | None = Field(None, description="Price the plan with the catalog in force then.")
    catalog_version: int | None = Field(
        None, ge=1, description="Alternative to `as_of`: that version's prices."
    )
    limit: int = Field(10, ge=1, le=100, description="How many ranked options to return.")
