"""Request and response shapes of `/v1/estimates/*`. Field names are the contract of issue 3."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "AcceleratorSpecIn",
    "InferenceEstimateCreate",
    "InferenceEstimateRead",
    "ModelArchitectureIn",
    "TrainingEstimateCreate",
    "TrainingEstimateRead",
]

PositiveInt = Annotated[int, Field(ge=1)]
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]


class StrictBody(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ModelArchitectureIn(StrictBody):
    """An architecture given inline, for a model the catalog does not have."""

    name: str = "custom"
    total_params_b: Positive
    active_params_b: Positive | None = Field(None, description="MoE: parameters used per token.")
    layers: int = Field(description="Decoder layers (at least 1).")
    hidden_size: int
    intermediate_size: int | None = None
    attention_heads: int
    kv_heads: int = Field(description="KV heads (GQA/MQA); must divide attention_heads.")
    head_dim: int
    vocab_size: int
    max_context: int
    experts: int = 1
    experts_per_token: int = 1
    attention: Literal["standard", "mla"] = "standard"
    kv_elements_per_layer: int | None = Field(None, description="MLA: cached elements per token per layer.")
    sliding_window: int | None = None
    sliding_window_layers: int = 0
    tied_embeddings: bool = False


class AcceleratorSpecIn(StrictBody):
    """An accelerator given inline, for hardware the catalog does not have."""

    name: str = "custom"
    memory_gb: Positive
    memory_bandwidth_gb_s: Positive
    family: str = Field("unknown", description="Chip architecture (hopper, ada, ...); selects efficiencies.")
    memory_kind: Literal["hbm", "gddr", "unified"]
    bf16_tflops: Positive | None = None
    fp8_tflops: Positive | None = None
    int8_tops: Positive | None = None
    fp32_tflops: Positive | None = None
    tdp_w: Positive | None = None
    interconnect_gb_s: Positive | None = None
    usable_memory_fraction: float = Field(1.0, gt=0, le=1)


ModelRef = Annotated[
    str | ModelArchitectureIn, Field(description="A catalog model id, or an architecture object.")
]
AcceleratorRef = Annotated[
    str | AcceleratorSpecIn, Field(description="A catalog accelerator id or alias, or a spec object.")
]
Engine = Literal["vllm", "tensorrt-llm", "sglang", "tgi", "llama.cpp"]


class CpuOffloadIn(StrictBody):
    host_memory_bandwidth_gb_s: Positive = Field(description="Host RAM bandwidth of the machine, GB/s.")
    gpu_layers: int | None = Field(None, ge=0, description="Layers kept on the GPU; default: as many as fit.")


class SpeculativeIn(StrictBody):
    draft_model: ModelRef
    draft_tokens: PositiveInt = 4
    acceptance_rate: float = Field(ge=0, lt=1)


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
    accelerator_count: PositiveInt = 1
    weight_precision: str = Field(
        "bf16", description="fp32, bf16, fp16, fp8, int8, int4, awq-int4, gguf-q4_k_m, ..."
    )
    kv_cache_precision: str = "bf16"
    engine: Engine = "vllm"
    input_tokens: PositiveInt = 1024
    output_tokens: PositiveInt = 256
    concurrency: PositiveInt = 1
    tensor_parallel: PositiveInt | None = Field(None, description="Default: every accelerator of a stage.")
    pipeline_parallel: PositiveInt = 1
    ttft_target_ms: Positive | None = None
    tpot_target_ms: Positive | None = None
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
    accelerator_count: PositiveInt = 8
    method: Literal["full", "lora", "qlora"] = "full"
    precision: str = Field("bf16", description="Compute precision: bf16, fp16, fp8 or fp32.")
    tokens: Positive = Field(description="Tokens processed in total (dataset tokens x epochs).")
    sequence_length: PositiveInt = 2048
    micro_batch_size: PositiveInt = 1
    zero_stage: int = Field(3, ge=0, le=3)
    activation_checkpointing: bool = False
    lora_rank: PositiveInt = 16
    tensor_parallel: PositiveInt = 1
    accelerators_per_node: PositiveInt = 8
    internode_bandwidth_gb_s: Positive | None = None


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
