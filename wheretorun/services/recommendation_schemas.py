"""Request shapes of `POST /v1/recommendations` (the contract of issue 4) and their translation to
the engine's workload values. Responses are in `recommendation_reads.py`."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from wheretorun.fields import UtcDateTime

__all__ = [
    "AssumptionsIn",
    "BatchWorkloadIn",
    "ConstraintsIn",
    "InferenceWorkloadIn",
    "RecommendationCreate",
    "TrainingWorkloadIn",
]

NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]
OptionName = Literal["hosted_api", "cloud", "owned", "local", "hybrid"]


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ModelChoice(Body):
    """`model` for one model, or `models` for a set of acceptable ones (best first)."""

    model: str | None = Field(None, description="A catalog model id (open or hosted).")
    models: list[str] | None = Field(None, min_length=1, description="Acceptable catalog models, best first.")

    @model_validator(mode="after")
    def _one_way_to_name_models(self) -> ModelChoice:
        if (self.model is None) == (self.models is None):
            raise ValueError("give either `model` or `models`")
        return self

    @property
    def model_ids(self) -> tuple[str, ...]:
        return (self.model,) if self.model is not None else tuple(self.models or ())


class InferenceWorkloadIn(ModelChoice):
    kind: Literal["inference"]
    requests_per_day: NonNegative | None = None
    requests_per_second: NonNegative | None = None
    input_tokens: int = Field(ge=1, description="Average input tokens per request.")
    cached_input_tokens: int = Field(0, ge=0, description="Of the input, tokens served from a prompt cache.")
    output_tokens: int = Field(ge=1, description="Average output tokens per request.")
    peak_to_average: float = Field(1.0, ge=1, allow_inf_nan=False)
    hourly_profile: list[NonNegative] | None = Field(
        None, min_length=24, max_length=24, description="24 relative loads, hour 0 to 23 (any scale)."
    )
    growth_per_month: float = Field(0.0, gt=-1, allow_inf_nan=False, description="0.05 = +5% a month.")
    ttft_ms: Positive | None = None
    tpot_ms: Positive | None = None
    tokens_per_s_per_user: Positive | None = Field(
        None, description="Alternative to tpot_ms: 1000 / tpot_ms."
    )
    redundancy: int = Field(0, ge=0, le=16, description="Spare replicas for failures (N+1 = 1).")

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
    kind: Literal["batch"]
    input_tokens_total: NonNegative
    output_tokens_total: NonNegative
    deadline_hours: Positive
    input_tokens_per_request: int = Field(1024, ge=1)
    output_tokens_per_request: int = Field(256, ge=1)


class TrainingWorkloadIn(Body):
    kind: Literal["training"]
    model: str
    method: Literal["full", "lora", "qlora"] = "full"
    tokens: Positive | None = Field(None, description="Tokens per run, epochs included.")
    dataset_tokens: Positive | None = Field(None, description="Alternative to `tokens`: with `epochs`.")
    epochs: Positive = 1.0
    deadline_hours: Positive | None = None
    runs_per_year: Positive = 1.0
    sequence_length: int = Field(2048, ge=1)

    @model_validator(mode="after")
    def _one_token_figure(self) -> TrainingWorkloadIn:
        if (self.tokens is None) == (self.dataset_tokens is None):
            raise ValueError("give either `tokens` or `dataset_tokens` (with `epochs`)")
        return self

    @property
    def tokens_per_run(self) -> float:
        return self.tokens if self.tokens is not None else (self.dataset_tokens or 0.0) * self.epochs


WorkloadIn = Annotated[
    InferenceWorkloadIn | BatchWorkloadIn | TrainingWorkloadIn, Field(discriminator="kind")
]


class ConstraintsIn(Body):
    on_premises_only: bool = Field(False, description="Data must stay on premises: owned or local only.")
    allowed_providers: list[str] = []
    excluded_providers: list[str] = []
    allowed_regions: list[str] = []
    allowed_accelerators: list[str] = Field([], description="Accelerator ids or aliases.")
    excluded_accelerators: list[str] = Field([], description="Accelerator ids or aliases.")
    allowed_options: list[OptionName] = []
    min_precision: str | None = Field(
        None, description="Lowest weight precision allowed, e.g. fp8 (no int4)."
    )
    max_usd_per_month: NonNegative | None = None
    max_capex_usd: NonNegative | None = None
    include_suspect_prices: bool = Field(
        False,
        description="Also plan with prices the catalog flags as suspect (far below the other providers of "
        "the same part or model, a shut-down provider, a deprecated model, ...). Left out by default and "
        "counted under the `suspect_price` rejection.",
    )


class ReservedDiscountIn(Body):
    one_year: float = Field(ge=0, lt=1)
    three_year: float = Field(ge=0, lt=1)


class AssumptionsIn(Body):
    """Overrides of the money model's defaults; every default and its source is listed at
    `GET /v1/recommendations/assumptions`. Fractions are 0-1 (0.08 = 8%)."""

    horizon_months: int | None = None
    hours_per_month: float | None = None
    electricity_usd_per_kwh: float | None = None
    pue: float | None = None
    colocation_usd_per_kw_month: float | None = None
    server_overhead_fraction: float | None = None
    cluster_network_fraction: float | None = None
    depreciation_years: float | None = None
    residual_value_fraction: float | None = None
    cost_of_capital_annual: float | None = None
    maintenance_fraction_annual: float | None = None
    operations_staff_usd_per_month: float | None = None
    cloud_staff_usd_per_month: float | None = None
    hosted_staff_usd_per_month: float | None = None
    staff_usd_per_fte_month: float | None = None
    accelerators_per_staff_fte: float | None = None
    target_utilisation: float | None = None
    spot_interruption_overhead: float | None = None
    reserved_1y_discount: float | None = Field(
        None, description="Your own 1-year discount for every provider (else the catalog's commitment terms)."
    )
    reserved_3y_discount: float | None = Field(
        None, description="Your own 3-year discount for every provider (else the catalog's commitment terms)."
    )
    reserved_discounts_by_provider: dict[str, ReservedDiscountIn] | None = Field(
        None,
        description="Your own (negotiated) 1- and 3-year discounts per provider; they take precedence over "
        "the catalog's commitment terms and are labelled as yours.",
    )
    hardware_lead_time_months: int | None = None
    base_server_power_w: float | None = None
    training_gpu_power_fraction: float | None = None
    serving_engine: Literal["vllm", "tensorrt-llm", "sglang", "tgi", "llama.cpp"] | None = None
    accelerators_per_sxm_server: int | None = None
    accelerators_per_pcie_server: int | None = None
    max_accelerators_per_job: int | None = None
    hosted_batch_completion_hours: float | None = None
    host_vm_usd_per_accelerator_hour: float | None = None


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
        extra="forbid", frozen=True, json_schema_extra={"examples": [*_RECOMMENDATION_EXAMPLES]}
    )

    workload: WorkloadIn
    constraints: ConstraintsIn = ConstraintsIn()
    assumptions: AssumptionsIn = AssumptionsIn()
    as_of: UtcDateTime | None = Field(None, description="Price the plan with the catalog in force then.")
    catalog_version: int | None = Field(
        None, ge=1, description="Alternative to `as_of`: that version's prices."
    )
    limit: int = Field(10, ge=1, le=100, description="How many ranked options to return.")
