"""Response and request shapes of the HTTP API. Units are in the field names; money is a decimal
string in USD (exact), sizes in GB are 10^9 bytes."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Annotated, Any, Generic, TypeVar

from fastapi import Path, Query
from pydantic import BaseModel, ConfigDict, Field

from wheretorun.bounds import NO_NUL
from wheretorun.fields import SAFE_INT_MAX, SAFE_INT_MIN

__all__ = [
    "CatalogId",
    "TextQuery",
    "RowId",
    "AcceleratorRead",
    "PrecisionSupportRead",
    "ApiPriceRead",
    "CatalogRead",
    "CatalogVersionRead",
    "CloudOfferRead",
    "EnergyPriceRead",
    "HealthRead",
    "ModelRead",
    "OverrideApplied",
    "PageRead",
    "PricedPageRead",
]

ItemT = TypeVar("ItemT")

RowId = Annotated[int, Path(ge=SAFE_INT_MIN, le=SAFE_INT_MAX)]
CatalogId = Annotated[str, Path(max_length=200, pattern=NO_NUL)]
"""A catalog id or alias in a path; NUL cannot be stored or compared by PostgreSQL."""
TextQuery = Annotated[str | None, Query(max_length=200, pattern=NO_NUL)]
"""A text filter in the query string."""


class ReadModel(BaseModel):
    model_config = ConfigDict(from_attributes=True, frozen=True)


class PageRead(BaseModel, Generic[ItemT]):
    items: list[ItemT]
    total: int = Field(description="How many rows match the filters in all pages.")
    limit: int
    offset: int


class PricedPageRead(PageRead[ItemT], Generic[ItemT]):
    """A page of prices, with the catalog version and moment they were read at."""

    catalog_version_id: int | None = Field(
        description="The catalog version in force at `as_of` (or the newest one for a current read)."
    )
    as_of: dt.datetime | None = Field(description="The moment read; null: the current prices.")


class OverrideApplied(ReadModel):
    """The price override (negotiated price) behind an effective price."""

    id: int
    reason: str
    multiplier: Decimal | None = Field(description="List price x this; null for a fixed price.")
    fixed_usd_per_hour: Decimal | None = Field(description="The negotiated instance price, if fixed.")


class PriceProvenance(ReadModel):
    source: str = Field(description="The file or page the price was read from.")
    fetched_at: dt.datetime
    effective_from: dt.datetime
    effective_to: dt.datetime | None = Field(description="Null while the price is current.")
    catalog_version_id: int


class PrecisionSupportRead(ReadModel):
    """What the accelerator's chip family runs (precision_support.csv, one row per family)."""

    family: str
    native: list[str] = Field(description="Arithmetic the chip has units for (training, W8A8 serving).")
    served: list[str] = Field(
        description="Weight precisions its serving engines run, weight-only formats included; "
        "a candidate never uses another."
    )
    source: str


class AcceleratorRead(ReadModel):
    id: str
    name: str
    vendor: str
    kind: str = Field(description="datacenter | workstation | consumer | tpu | other")
    form_factor: str | None
    memory_gb: float | None
    memory_bandwidth_gb_s: float | None
    fp32_tflops: float | None
    tf32_tflops: float | None
    bf16_tflops: float | None = Field(
        description="Dense 16-bit tensor TFLOPS with FP32 accumulation (training and bf16 inference)."
    )
    fp16_accumulate_tflops: float | None = Field(
        description="Dense FP16 tensor TFLOPS with FP16 accumulation, where higher (GeForce cards: twice "
        "bf16_tflops); only engines that accumulate in FP16 (llama.cpp) use it."
    )
    fp8_tflops: float | None
    int8_tops: float | None
    int4_tops: float | None
    tdp_w: float | None
    interconnect: str | None
    interconnect_gb_s: float | None = Field(description="Scale-up link, unidirectional, per accelerator.")
    internode_gb_s: float | None = Field(description="Scale-out network per accelerator, GB/s.")
    family: str | None = Field(description="Chip architecture (hopper, ada, cdna3, ...).")
    memory_kind: str | None = Field(description="hbm | gddr | unified")
    spec_source: str = Field(description="Where each figure came from.")
    notes: str | None = Field(description="Mapping decisions and caveats.")
    aliases: list[str] = Field(description="Every spelling of this accelerator the sources use.")
    purchase_price_usd: Decimal | None = Field(
        description="Typical purchase price of what `purchase_price_basis` says is bought; null if unknown."
    )
    purchase_price_source: str | None
    precision_support: PrecisionSupportRead | None = Field(
        description="Null when the catalog states none for its family (nothing is checked then)."
    )
    purchase_price_basis: str | None = Field(
        None, description="chip: one accelerator alone; system: a server of `purchase_accelerators_per_unit`."
    )
    purchase_accelerators_per_unit: int | None = None


class ModelRead(ReadModel):
    id: str
    name: str
    family: str
    open_weights: bool
    hf_id: str | None
    total_params_b: float | None
    active_params_b: float | None = Field(
        description="MoE: parameters used per token. Null for dense models."
    )
    layers: int | None
    hidden_size: int | None
    intermediate_size: int | None
    attention_heads: int | None
    kv_heads: int | None
    head_dim: int | None
    vocab_size: int | None
    max_context: int | None
    attention: str | None = Field(description="MHA | GQA | MQA | MLA")
    sliding_window: int | None
    sliding_window_layers: int | None
    experts: int | None
    experts_per_token: int | None
    kv_cache_bytes_per_token_16bit: int | None
    source: str
    hosted_model_ids: list[str] = Field(description="Hosted-API model ids that serve this same model.")


class CloudOfferRead(PriceProvenance):
    id: int
    provider: str
    instance_type: str
    region: str
    accelerator_name: str = Field(description="As the provider's catalog spells it.")
    accelerator_id: str | None = Field(description="Canonical accelerator id; null when not recognised.")
    accelerator_count: Decimal = Field(description="Accelerators per instance; fractional for GPU slices.")
    accelerator_memory_gb: float | None = Field(description="Memory of one accelerator.")
    vcpus: Decimal | None
    memory_gib: Decimal | None = Field(description="Host RAM in GiB, as the provider publishes it.")
    on_demand_usd_per_hour: Decimal | None = Field(description="Whole instance; null when not listed.")
    spot_usd_per_hour: Decimal | None = Field(description="Whole instance; null when no spot market.")
    on_demand_usd_per_accelerator_hour: Decimal | None
    spot_usd_per_accelerator_hour: Decimal | None
    zone_count: int = Field(description="Availability zones (or data centres) the region lists it in.")
    accelerator_only: bool = Field(description="True for GCP: the attached GPUs only, the host VM is extra.")
    suspect: bool = Field(description="The price looks implausible; do not plan with it.")
    suspect_reason: str | None
    note: str | None = Field(description="Corrections and caveats that do not make the price suspect.")
    effective_on_demand_usd_per_hour: Decimal | None = Field(
        description="The on-demand price after a price override; the list price when none applies."
    )
    effective_on_demand_usd_per_accelerator_hour: Decimal | None
    override: OverrideApplied | None = Field(None, description="The override in force, if any.")


class ApiPriceRead(PriceProvenance):
    id: int
    provider: str
    model_id: str
    mode: str | None
    catalog_model_id: str | None = Field(description="The open model this id serves, when known.")
    input_usd_per_million_tokens: Decimal | None
    cached_input_usd_per_million_tokens: Decimal | None
    cache_write_usd_per_million_tokens: Decimal | None
    output_usd_per_million_tokens: Decimal | None
    batch_input_usd_per_million_tokens: Decimal | None
    batch_output_usd_per_million_tokens: Decimal | None
    context_window_tokens: int | None
    max_output_tokens: int | None
    deprecation_date: dt.date | None
    suspect: bool
    suspect_reason: str | None
    effective_input_usd_per_million_tokens: Decimal | None = Field(
        description="After a price override (it scales every token price); the list price without one."
    )
    effective_output_usd_per_million_tokens: Decimal | None
    override: OverrideApplied | None = Field(None, description="The override in force, if any.")


class EnergyPriceRead(PriceProvenance):
    id: int
    region: str
    usd_per_kwh: Decimal


class CatalogVersionRead(ReadModel):
    id: int
    created_at: dt.datetime
    kind: str
    description: str
    sources: list[dict[str, Any]]


class CatalogRead(BaseModel):
    version: CatalogVersionRead | None
    counts: dict[str, int]
    providers: list[str]


class HealthRead(BaseModel):
    status: str
    database: str | None = None
