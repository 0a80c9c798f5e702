"""Plain values that the source readers produce and the catalog loader writes.

The readers in `wheretorun.pricing.sources` turn public files (SkyPilot `vms.csv`, LiteLLM's price
JSON, Epoch AI's hardware CSV, our curated tables) into these records; `wheretorun.pricing.loader`
writes them to the database. Keeping the two apart means an importer can be tested without a
database and the same readers serve the seed and later imports.

Units are in the field names. Sizes in GB are 10^9 bytes; host RAM from the clouds is in GiB as
published. Money is `Decimal` USD; `None` means *unknown*, never free.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal

__all__ = [
    "AcceleratorRecord",
    "ApiPriceRecord",
    "CloudOfferRecord",
    "CommitmentTermRecord",
    "EnergyPriceRecord",
    "HardwarePriceRecord",
    "ModelRecord",
]


@dataclass(frozen=True, slots=True)
class AcceleratorRecord:
    """One accelerator model, its specs and every spelling the sources use for it."""

    id: str  # stable slug, e.g. "h100-sxm"
    name: str  # display name, e.g. "NVIDIA H100 SXM"
    vendor: str
    kind: str  # datacenter | workstation | consumer | tpu | other
    form_factor: str | None
    memory_gb: float | None
    memory_bandwidth_gb_s: float | None
    fp32_tflops: float | None
    tf32_tflops: float | None
    bf16_tflops: float | None  # dense FP16/BF16 tensor
    fp8_tflops: float | None
    int8_tops: float | None
    int4_tops: float | None
    tdp_w: float | None
    interconnect: str | None
    interconnect_gb_s: float | None  # unidirectional, per accelerator
    purchase_price_usd: Decimal | None
    purchase_price_source: str | None
    spec_source: str
    aliases: tuple[str, ...] = ()
    notes: str | None = None  # mapping decisions and caveats (why a spelling means this part, ...)
    internode_gb_s: float | None = None  # scale-out network per accelerator, GB/s (Epoch bit/s / 8)
    family: str | None = None  # chip architecture (hopper, ada, cdna3, ...): the engine's efficiency key
    memory_kind: str | None = None  # hbm | gddr | unified
    # FP16 tensor rate with FP16 accumulation where it differs from bf16_tflops (GeForce: twice)
    fp16_accumulate_tflops: float | None = None


@dataclass(frozen=True, slots=True)
class ModelRecord:
    """A model: architecture facts for open weights, or a proprietary hosted entry without them."""

    id: str  # stable slug, e.g. "llama-3.1-70b"
    name: str
    family: str
    open_weights: bool
    hf_id: str | None
    total_params_b: float | None
    active_params_b: float | None  # MoE: parameters used per token; None for dense
    layers: int | None
    hidden_size: int | None
    intermediate_size: int | None
    attention_heads: int | None
    kv_heads: int | None
    head_dim: int | None
    vocab_size: int | None
    max_context: int | None
    attention: str | None  # MHA | GQA | MQA | MLA
    sliding_window: int | None  # tokens, where some layers use a sliding window
    sliding_window_layers: int | None  # how many layers use it
    experts: int | None
    experts_per_token: int | None
    kv_cache_bytes_per_token_16bit: int | None
    source: str
    hosted_model_ids: tuple[str, ...] = ()  # LiteLLM keys that serve this same model


@dataclass(frozen=True, slots=True)
class CloudOfferRecord:
    """One instance type in one region of one provider (zones collapsed)."""

    provider: str
    instance_type: str
    region: str
    accelerator_name: str  # as the source spells it
    accelerator_id: str | None  # canonical id; None when the name is not in our table
    accelerator_count: Decimal  # fractional for GPU slices (AWS g6f)
    vcpus: Decimal | None
    memory_gib: Decimal | None
    on_demand_usd_per_hour: Decimal | None
    spot_usd_per_hour: Decimal | None
    zone_count: int
    accelerator_only: bool  # GCP: price of the attached GPUs only, host VM not included
    suspect_reason: str | None  # set when a price looks implausible; such prices are not served as real
    source: str
    note: str | None = None  # corrections and caveats that do not make the price suspect


@dataclass(frozen=True, slots=True)
class ApiPriceRecord:
    """Token prices of one hosted model id at one provider."""

    provider: str
    model_id: str  # LiteLLM key
    mode: str | None
    input_usd_per_million_tokens: Decimal | None
    cached_input_usd_per_million_tokens: Decimal | None
    cache_write_usd_per_million_tokens: Decimal | None
    output_usd_per_million_tokens: Decimal | None
    batch_input_usd_per_million_tokens: Decimal | None
    batch_output_usd_per_million_tokens: Decimal | None
    context_window_tokens: int | None
    max_output_tokens: int | None
    deprecation_date: dt.date | None
    source: str
    suspect_reason: str | None = None
    catalog_model_id: str | None = None  # the open model it serves, when known
    extra: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class HardwarePriceRecord:
    """A typical purchase price (our canonical price format): of one accelerator (`basis` "chip":
    the card or module alone), or of a whole server holding `accelerators_per_unit` of them
    (`basis` "system": chassis, CPUs, memory and intra-node network included)."""

    accelerator_id: str  # canonical id
    usd_per_unit: Decimal
    source: str
    basis: str = "chip"  # chip | system
    accelerators_per_unit: int = 1


@dataclass(frozen=True, slots=True)
class CommitmentTermRecord:
    """A published commitment (reserved instance, committed-use discount, savings plan, reserved
    cluster price) of one provider, for all its GPU instances or narrowed to an accelerator and/or
    an instance family (an instance-type prefix). Exactly one of the discount (off the on-demand
    price) or the committed price per accelerator-hour is given."""

    provider: str
    accelerator_id: str  # canonical id, or "" for every accelerator of the provider
    instance_family: str  # instance-type prefix ("p4d", "Standard_ND96amsr"), or "" for all
    term_months: int
    discount_fraction: Decimal | None  # 0.64 = 64% off on-demand
    usd_per_accelerator_hour: Decimal | None
    source: str


@dataclass(frozen=True, slots=True)
class EnergyPriceRecord:
    """The price of electricity in a region (our canonical price format)."""

    region: str
    usd_per_kwh: Decimal
    source: str
