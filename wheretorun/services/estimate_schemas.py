"""Request and response shapes of `/v1/estimates/*`. Field names are the contract of issue 3."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt

from wheretorun.bounds import MAX_ACCELERATORS, MAX_CONTEXT_TOKENS, MAX_TOTAL_TOKENS, Id, Text
from wheretorun.fields import number

__all__ = [
    "AcceleratorSpecIn",
    "InferenceEstimateCreate",
    "InferenceEstimateRead",
    "ModelArchitectureIn",
    "TrainingEstimateCreate",
    "TrainingEstimateRead",
]


def _whole(low: int, high: int, description: str | None = None) -> Any:
    """A strict integer field in [low, high] (`true` is not 1)."""
    return Field(ge=low, le=high, description=description)


# Architecture bounds: ~10x the largest published model of each figure (GPT-style decoders up to
# Llama 3.1 405B: 126 layers, hidden 16,384, 128 heads; DeepSeek-V3: 256 experts, vocab 129,280;
# Gemma 3: vocab 262,144; context: MAX_CONTEXT_TOKENS), so shapes stay within float range.
Layers = Annotated[StrictInt, _whole(1, 2_000)]
Width = Annotated[StrictInt, _whole(1, 1_000_000)]
Heads = Annotated[StrictInt, _whole(1, 10_000)]
Experts = Annotated[StrictInt, _whole(1, 10_000)]
ParamsB = Annotated[float, number(0.0, 100_000.0, low_open=True)]  # 100T: ~50x the largest (2T)
Tokens = Annotated[StrictInt, _whole(1, MAX_CONTEXT_TOKENS)]
AcceleratorCount = Annotated[StrictInt, _whole(1, MAX_ACCELERATORS)]
Parallel = Annotated[StrictInt, _whole(1, 100_000)]  # a group larger than any cluster's nodes x 8
# Latency targets: 0.01 ms (below any measured time per output token; the fastest published
# decoders reach ~0.4 ms per token) to one hour.
LatencyMs = Annotated[float, number(0.01, 3_600_000.0)]


class StrictBody(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ModelArchitectureIn(StrictBody):
    """An architecture given inline, for a model the catalog does not have."""

    name: Text = "custom"
    total_params_b: ParamsB
    active_params_b: ParamsB | None = Field(None, description="MoE: parameters used per token.")
    layers: Layers = Field(description="Decoder layers (at least 1).")
    hidden_size: Width
    intermediate_size: Width | None = None
    attention_heads: Heads
    kv_heads: Heads = Field(description="KV heads (GQA/MQA); must divide attention_heads.")
    head_dim: Annotated[StrictInt, _whole(1, 100_000)]
    vocab_size: Annotated[StrictInt, _whole(1, 10_000_000)]
    max_context: Annotated[StrictInt, _whole(1, MAX_CONTEXT_TOKENS)]
    experts: Experts = 1
    experts_per_token: Experts = 1
    attention: Literal["standard", "mla"] = Field(
        "standard", description="mla (DeepSeek-V2/V3) needs `kv_elements_per_layer`."
    )
    kv_elements_per_layer: Width | None = Field(
        None, description="MLA: cached elements per token per layer (576 for DeepSeek-V3)."
    )
    sliding_window: Annotated[StrictInt, _whole(1, MAX_CONTEXT_TOKENS)] | None = None
    sliding_window_layers: Annotated[StrictInt, _whole(0, 2_000)] = 0
    tied_embeddings: StrictBool = False


class AcceleratorSpecIn(StrictBody):
    """An accelerator given inline, for hardware the catalog does not have.

    Bounds: from below any accelerator sold (1 GB, 1 GB/s, 0.001 TFLOPS) to ~5x a whole Cerebras
    WSE-3 wafer (44 GB on-chip memory, 21 PB/s, 125 PFLOPS sparse FP16, 23 kW; cerebras.ai, 2024),
    the largest single accelerator; memory up to 100 TB covers unified-memory systems."""

    name: Text = "custom"
    memory_gb: Annotated[float, number(0.001, 100_000.0)]
    memory_bandwidth_gb_s: Annotated[float, number(1.0, 100_000_000.0)]
    family: Text = Field("unknown", description="Chip architecture (hopper, ada, ...); selects efficiencies.")
    memory_kind: Literal["hbm", "gddr", "unified"]
    bf16_tflops: Annotated[float, number(0.001, 1_000_000.0)] | None = None
    fp8_tflops: Annotated[float, number(0.001, 1_000_000.0)] | None = None
    int8_tops: Annotated[float, number(0.001, 1_000_000.0)] | None = None
    fp32_tflops: Annotated[float, number(0.001, 1_000_000.0)] | None = None
    tdp_w: Annotated[float, number(1.0, 100_000.0)] | None = None
    interconnect_gb_s: Annotated[float, number(0.1, 100_000_000.0)] | None = None
    usable_memory_fraction: float = Field(1.0, gt=0, le=1, allow_inf_nan=False, strict=True)


ModelRef = Annotated[
    Id | ModelArchitectureIn, Field(description="A catalog model id, or an architecture object.")
]
AcceleratorRef = Annotated[
    Id | AcceleratorSpecIn, Field(description="A catalog accelerator id or alias, or a spec object.")
]
Engine = Literal["vllm", "tensorrt-llm", "sglang", "tgi", "llama.cpp"]


class CpuOffloadIn(StrictBody):
    # Host RAM: 1 GB/s (below single-channel DDR3) to 10 TB/s (~15x a 12-channel DDR5 server socket).
    host_memory_bandwidth_gb_s: Annotated[float, number(1.0, 10_000.0)] = Field(
        description="Host RAM bandwidth of the machine, GB/s."
    )
    gpu_layers: Annotated[StrictInt, _whole(0, 2_000)] | None = Field(
        None, description="Layers kept on the GPU, at most the model's layers; default: as many as fit."
    )


class SpeculativeIn(StrictBody):
    draft_model: ModelRef
    draft_tokens: Annotated[StrictInt, _whole(1, 64)] = 4  # drafts longer than ~10 tokens are rare
    acceptance_rate: float = Field(ge=0, lt=1, allow_inf_nan=False, strict=True)


class InferenceEstimateCreate(StrictBody):
    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        json_schema_extra={
            "examples": [
                {
                    "model": "llama-3.1-70b",
                    "accelerator": "H100",
                    "accelerator_count": 4,
                    "weight_precision": "fp8",
                    "concurrency": 32,
                    "ttft_target_ms": 2000,
                    "tpot_target_ms": 50,
                },
                {"model": "llama-3.1-8b", "accelerator": "RTX4090", "weight_precision": "awq-int4"},
            ]
        },
    )

    model: ModelRef
    accelerator: AcceleratorRef
    accelerator_count: AcceleratorCount = 1
    weight_precision: Text = Field(
        "bf16", description="fp32, bf16, fp16, fp8, int8, int4, awq-int4, gguf-q4_k_m, ..."
    )
    kv_cache_precision: Text = "bf16"
    engine: Engine = "vllm"
    input_tokens: Tokens = 1024
    output_tokens: Tokens = 256
    # Concurrent sequences: ~10x what the largest deployments batch per replica (thousands).
    concurrency: Annotated[StrictInt, _whole(1, 1_000_000)] = 1
    tensor_parallel: Parallel | None = Field(None, description="Default: every accelerator of a stage.")
    pipeline_parallel: Parallel = 1
    ttft_target_ms: LatencyMs | None = None
    tpot_target_ms: LatencyMs | None = None
    speculative: SpeculativeIn | None = None
    cpu_offload: CpuOffloadIn | None = None


class TrainingEstimateCreate(StrictBody):
    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        json_schema_extra={
            "examples": [
                {
                    "model": "llama-3.1-8b",
                    "accelerator": "H100",
                    "accelerator_count": 8,
                    "method": "lora",
                    "tokens": 1_500_000_000,
                },
                {"model": "llama-2-7b", "accelerator": "A100-80GB", "accelerator_count": 64, "tokens": 1e11},
            ]
        },
    )

    model: ModelRef
    accelerator: AcceleratorRef
    accelerator_count: AcceleratorCount = 8
    method: Literal["full", "lora", "qlora"] = "full"
    precision: Text = Field("bf16", description="Compute precision: bf16, fp16, fp8 or fp32.")
    tokens: Annotated[float, number(1.0, MAX_TOTAL_TOKENS)] = Field(
        description="Tokens processed in total (dataset tokens x epochs)."
    )
    sequence_length: Tokens = 2048
    micro_batch_size: Annotated[StrictInt, _whole(1, 100_000)] = 1
    zero_stage: Annotated[StrictInt, _whole(0, 3)] = 3
    activation_checkpointing: StrictBool = False
    lora_rank: Annotated[StrictInt, _whole(1, 100_000)] = 16
    tensor_parallel: Parallel = 1
    pipeline_parallel: Parallel = Field(
        1,
        description="Pipeline stages (1F1B): divides the layers; with tensor_parallel, the accelerators.",
    )
    accelerators_per_node: Annotated[StrictInt, _whole(1, 1_000)] = 8  # GB200 NVL72 racks: 72
    # Scale-out network per accelerator: 0.1 GB/s (below 1 Gb/s Ethernet) to 100 TB/s (~1,000x
    # 800 Gb/s InfiniBand XDR).
    internode_bandwidth_gb_s: Annotated[float, number(0.1, 100_000.0)] | None = None


class MemoryRead(BaseModel):
    weights_gb: float
    kv_cache_gb: float
    kv_cache_per_sequence_gb: float
    activations_gb: float
    total_gb: float
    available_gb: float
    reserved_gb: float
    offloaded_gb: float
    fits: bool
    shortfall_gb: float
    max_concurrency: int


class PerformanceRead(BaseModel):
    ttft_ms: float | None
    tpot_ms: float
    output_tokens_per_s_per_sequence: float
    output_tokens_per_s: float
    batch_output_tokens_per_s: float | None
    prefill_ms: float | None
    decode_step_ms: float
    bound: str = Field(description="memory_bandwidth | compute | interconnect")
    bound_reason: str


class RequestRateRead(BaseModel):
    requests_per_s: float
    concurrency: int
    ttft_ms: float
    tpot_ms: float


class InferenceEstimateRead(BaseModel):
    model: str
    accelerator: str
    memory: MemoryRead
    performance: PerformanceRead
    max_request_rate: RequestRateRead | None = Field(
        description="The highest request rate that meets the TTFT/TPOT targets, when targets are given."
    )
    replicas: int
    efficiency_version: str
    efficiency_provenance: str
    notes: list[str]


class TrainingMemoryRead(BaseModel):
    weights_gb: float
    gradients_gb: float
    optimizer_gb: float
    activations_gb: float


class WholeRunRead(BaseModel):
    """A whole run: the steady-state time plus interruptions (goodput) and the efficiency lost at
    production scale, fitted on published whole runs; `uncertainty` says how far off it may be."""

    accelerator_hours: float
    wall_clock_hours: float
    goodput: float
    scale_efficiency: float
    uncertainty: str


class TrainingEstimateRead(BaseModel):
    model: str
    accelerator: str
    memory_per_accelerator_gb: float
    memory: TrainingMemoryRead
    available_gb: float
    fits: bool
    shortfall_gb: float
    min_accelerators: int | None
    trainable_params: float
    model_flops: float
    total_flops: float
    mfu: float | None
    hfu: float | None
    tokens_per_s_per_accelerator: float | None
    accelerator_hours: float | None
    wall_clock_hours: float | None
    efficiency_version: str
    notes: list[str]
    whole_run: WholeRunRead | None = None
