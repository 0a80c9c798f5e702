"""A small catalog snapshot built by hand from real public figures, for the recommendation tests.

Every figure cites the shipped file it was copied from (paths under wheretorun/pricing/data/):
* accelerators: calibration/gpus.csv rows 'NVIDIA H100 SXM' (80 GB HBM3, 3,350 GB/s, 989 bf16 /
  1,979 fp8 TFLOPS, 700 W, NVLink 450 GB/s unidirectional), 'NVIDIA L4' (24 GB, 300 GB/s,
  121 bf16 / 242 fp8 TFLOPS, 72 W), 'NVIDIA GeForce RTX 4090' (24 GB, 1,008 GB/s, 450 W; its
  330 TFLOPS is an FP16-accumulate rate, halved to 165 for bf16 as the row's note says);
* models: models.csv rows llama-3.1-8b, llama-3.3-70b, llama-3.1-405b; gpt-4o is proprietary;
* cloud offers: sources/skypilot-catalog/aws_vms.csv, us-east-1: p5.48xlarge (8 x H100,
  $55.04/h on demand, $14.582/h spot in use1-az3) and g6.xlarge (1 x L4, $0.8048 / $0.4102);
  p5.48xlarge eu-north-1 ($58.8928, no spot); gcp_vms.csv prices GPUs without their VM
  (`accelerator_only`): 8 x H100 in asia-northeast1 at $33.60609 / $25.8752;
* hosted prices: sources/litellm/model_prices_and_context_window.json (USD per token x 1e6):
  together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo 1.04 / 1.04, deepinfra/meta-llama/
  Llama-3.3-70B-Instruct-Turbo 0.10 / 0.32, together_ai/meta-llama/Meta-Llama-3.1-8B-Instruct-
  Turbo 0.18 / 0.18, gpt-4o 2.50 / 10.00 (batch 1.25 / 5.00, cached 1.25), and
  vertex_ai/meta/llama-3.1-8b-instruct-maas whose 0.0 prices the reader turns into "unknown";
* purchase prices: hardware_prices.csv: H100 SXM a DGX H100 (8 GPUs, server included) at
  8 x $33,600 = $268,800; calibration gpus.csv: L4 $2,500 (midpoint of 2,200-2,800), RTX 4090
  $2,300 (midpoint of 1,600-3,000), chip prices;
* commitment terms: commitment_terms.csv, AWS 1-year 0.41 / 3-year 0.64 and GCP 0.37 / 0.56 off
  on-demand for every GPU instance (Epoch AI's DEFAULT_CUD).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from decimal import Decimal

from wheretorun.engine import AcceleratorSpec, ModelArchitecture
from wheretorun.engine.capacity import ReplicaCapacity
from wheretorun.engine.catalog import (
    AcceleratorEntry,
    ApiPriceOffer,
    CatalogSnapshot,
    CloudOffer,
    CommitmentTerm,
    HardwarePrice,
    ModelEntry,
)
from wheretorun.engine.precision import Precision
from wheretorun.engine.specs import MemoryKind

AS_OF = dt.datetime(2026, 11, 30, tzinfo=dt.UTC)

H100 = AcceleratorSpec(
    name="h100-sxm",
    memory_gb=80,
    memory_bandwidth_gb_s=3350,
    family="hopper",
    memory_kind=MemoryKind.HBM,
    bf16_tflops=989,
    fp8_tflops=1979,
    int8_tops=1979,
    fp32_tflops=67,
    tdp_w=700,
    interconnect_gb_s=450,
)
L4 = AcceleratorSpec(
    name="l4",
    memory_gb=24,
    memory_bandwidth_gb_s=300,
    family="ada",
    memory_kind=MemoryKind.GDDR,
    bf16_tflops=121,
    fp8_tflops=242,
    int8_tops=242,
    fp32_tflops=30.3,
    tdp_w=72,
)
RTX_4090 = AcceleratorSpec(
    name="rtx-4090",
    memory_gb=24,
    memory_bandwidth_gb_s=1008,
    family="ada",
    memory_kind=MemoryKind.GDDR,
    bf16_tflops=165,
    fp8_tflops=330,
    int8_tops=330,
    fp32_tflops=82.6,
    tdp_w=450,
)

LLAMA_8B = ModelArchitecture(
    name="llama-3.1-8b",
    layers=32,
    hidden_size=4096,
    intermediate_size=14336,
    attention_heads=32,
    kv_heads=8,
    head_dim=128,
    vocab_size=128256,
    max_context=131072,
    total_params_b=8,
)
LLAMA_70B = ModelArchitecture(
    name="llama-3.3-70b",
    layers=80,
    hidden_size=8192,
    intermediate_size=28672,
    attention_heads=64,
    kv_heads=8,
    head_dim=128,
    vocab_size=128256,
    max_context=131072,
    total_params_b=70,
)
LLAMA_405B = ModelArchitecture(
    name="llama-3.1-405b",
    layers=126,
    hidden_size=16384,
    intermediate_size=53248,
    attention_heads=128,
    kv_heads=8,
    head_dim=128,
    vocab_size=128256,
    max_context=131072,
    total_params_b=405,
)

ACCELERATORS = {
    "h100-sxm": AcceleratorEntry("h100-sxm", "NVIDIA H100 SXM", "NVIDIA", "datacenter", H100, "SXM5"),
    "l4": AcceleratorEntry("l4", "NVIDIA L4", "NVIDIA", "datacenter", L4, "PCIe (low profile)"),
    "rtx-4090": AcceleratorEntry(
        "rtx-4090", "NVIDIA GeForce RTX 4090", "NVIDIA", "consumer", RTX_4090, "PCIe"
    ),
}
MODELS = {
    "llama-3.1-8b": ModelEntry("llama-3.1-8b", "Llama 3.1 8B", "Llama 3.1", True, LLAMA_8B),
    "llama-3.3-70b": ModelEntry("llama-3.3-70b", "Llama 3.3 70B", "Llama 3.3", True, LLAMA_70B),
    "llama-3.1-405b": ModelEntry("llama-3.1-405b", "Llama 3.1 405B", "Llama 3.1", True, LLAMA_405B),
    "gpt-4o": ModelEntry("gpt-4o", "GPT-4o", "GPT-4o", False, None),
}

_SKYPILOT_AWS = "skypilot-catalog aws_vms.csv"
_CUD = "commitment_terms.csv (Epoch AI DEFAULT_CUD)"
COMMITMENTS = {
    "aws": (
        CommitmentTerm("aws", "", "", 12, Decimal("0.41"), None, _CUD),
        CommitmentTerm("aws", "", "", 36, Decimal("0.64"), None, _CUD),
    ),
    "gcp": (
        CommitmentTerm("gcp", "", "", 12, Decimal("0.37"), None, _CUD),
        CommitmentTerm("gcp", "", "", 36, Decimal("0.56"), None, _CUD),
    ),
}


def cloud_offer(
    offer_id: int,
    instance_type: str,
    accelerator_id: str,
    count: str,
    on_demand: str | None,
    spot: str | None,
    *,
    provider: str = "aws",
    region: str = "us-east-1",
    accelerator_only: bool = False,
) -> CloudOffer:
    return CloudOffer(
        id=offer_id,
        provider=provider,
        region=region,
        instance_type=instance_type,
        accelerator_id=accelerator_id,
        accelerator_count=Decimal(count),
        on_demand_usd_per_hour=None if on_demand is None else Decimal(on_demand),
        spot_usd_per_hour=None if spot is None else Decimal(spot),
        accelerator_only=accelerator_only,
        source=_SKYPILOT_AWS,
        commitments=COMMITMENTS.get(provider, ()),
    )


P5 = cloud_offer(1, "p5.48xlarge", "h100-sxm", "8", "55.04", "14.582")
G6 = cloud_offer(2, "g6.xlarge", "l4", "1", "0.8048", "0.4102")
GCP_H100 = cloud_offer(
    3,
    "gcp-accel:H100x8",
    "h100-sxm",
    "8",
    "33.60609",
    "25.8752",
    provider="gcp",
    region="asia-northeast1",
    accelerator_only=True,
)
P5_EU = cloud_offer(4, "p5.48xlarge", "h100-sxm", "8", "58.8928", None, region="eu-north-1")


def api_price(
    price_id: int,
    provider: str,
    model_id: str,
    catalog_model_id: str | None,
    input_price: str | None,
    output_price: str | None,
    *,
    cached: str | None = None,
    batch: tuple[str, str] | None = None,
    context: int | None = 131072,
) -> ApiPriceOffer:
    def money(value: str | None) -> Decimal | None:
        return None if value is None else Decimal(value)

    return ApiPriceOffer(
        id=price_id,
        provider=provider,
        model_id=model_id,
        catalog_model_id=catalog_model_id,
        input_usd_per_million_tokens=money(input_price),
        cached_input_usd_per_million_tokens=money(cached),
        output_usd_per_million_tokens=money(output_price),
        batch_input_usd_per_million_tokens=money(batch[0]) if batch else None,
        batch_output_usd_per_million_tokens=money(batch[1]) if batch else None,
        context_window_tokens=context,
        source="litellm model_prices_and_context_window.json",
    )


TOGETHER_70B = api_price(
    10, "together_ai", "together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo", "llama-3.3-70b", "1.04", "1.04"
)
DEEPINFRA_70B = api_price(
    11, "deepinfra", "deepinfra/meta-llama/Llama-3.3-70B-Instruct-Turbo", "llama-3.3-70b", "0.10", "0.32"
)
TOGETHER_8B = api_price(
    12,
    "together_ai",
    "together_ai/meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo",
    "llama-3.1-8b",
    "0.18",
    "0.18",
)
GPT_4O = api_price(
    13, "openai", "gpt-4o", "gpt-4o", "2.50", "10.00", cached="1.25", batch=("1.25", "5.00"), context=128000
)
VERTEX_8B_UNPRICED = api_price(
    14, "vertex_ai", "vertex_ai/meta/llama-3.1-8b-instruct-maas", "llama-3.1-8b", None, None, context=128000
)

HARDWARE = {
    "h100-sxm": HardwarePrice(
        "h100-sxm", Decimal("268800"), "hardware_prices.csv DGX H100", basis="system", accelerators_per_unit=8
    ),
    "l4": HardwarePrice("l4", Decimal("2500"), "calibration gpus.csv 2200-2800 midpoint"),
    "rtx-4090": HardwarePrice("rtx-4090", Decimal("2300"), "calibration gpus.csv 1600-3000 midpoint"),
}


def snapshot(**changes: object) -> CatalogSnapshot:
    """The test catalog; keyword arguments replace whole fields."""
    base = CatalogSnapshot(
        version=7,
        as_of=AS_OF,
        accelerators=ACCELERATORS,
        models=MODELS,
        cloud_offers=(P5, G6, GCP_H100, P5_EU),
        api_prices=(TOGETHER_70B, DEEPINFRA_70B, TOGETHER_8B, GPT_4O, VERTEX_8B_UNPRICED),
        hardware_prices=HARDWARE,
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def replica_capacity(
    requests_per_s: float, accelerators: int = 4, single_stream: float = 0.2
) -> ReplicaCapacity:
    """A sized replica of H100s at FP8 serving `requests_per_s` within its latency targets (the
    cost models' tests set the capacity directly instead of estimating it)."""
    return ReplicaCapacity(
        "h100-sxm",
        accelerators,
        Precision.FP8,
        None,
        "",
        requests_per_s,
        64,
        100.0,
        40.0,
        requests_per_s * 100,
        70.0,
        280.0,
        single_stream,
        100.0,
        20.0,
    )
