"""What the caller asks the engine to estimate: an inference deployment or a training job.

Configs validate on construction and raise `InvalidSpec(field, reason)` for impossible inputs.
Validation that needs the model as well (a tensor-parallel degree that does not divide the
attention heads) happens in `estimate_inference` / `estimate_training`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from wheretorun.engine.errors import InvalidSpec
from wheretorun.engine.precision import KV_CACHE_PRECISIONS, Precision
from wheretorun.engine.specs import ModelArchitecture

__all__ = [
    "CpuOffload",
    "InferenceConfig",
    "ServingEngine",
    "SpeculativeDecoding",
    "TrainingConfig",
    "TrainingMethod",
    "engine_memory_fraction",
]


class ServingEngine(StrEnum):
    VLLM = "vllm"
    TENSORRT_LLM = "tensorrt-llm"
    SGLANG = "sglang"
    TGI = "tgi"
    LLAMA_CPP = "llama.cpp"


def accumulates_in_fp16(engine: ServingEngine, weight_precision: Precision) -> bool:
    """Whether the engine's 16-bit matmuls accumulate in FP16 rather than FP32.

    llama.cpp multiplies fp16 and dequantised (GGUF) weights with cuBLAS in FP16 compute on GPUs
    with fast FP16: ggml-org/llama.cpp ggml/src/ggml-cuda/ggml-cuda.cu
    @00108827d87949b538ad1821f81a6b111827fcda, `batched_mul_mat_traits<GGML_TYPE_F16>` has
    `compute_type = CUBLAS_COMPUTE_16F`, which `ggml_cuda_mul_mat_cublas` picks for quantised
    weights; bf16 weights use CUBLAS_COMPUTE_32F. The other engines accumulate in FP32 (the
    cuBLAS/CUTLASS defaults for bf16 and fp8 GEMMs).
    """
    return engine == ServingEngine.LLAMA_CPP and weight_precision != Precision.BF16


class TrainingMethod(StrEnum):
    FULL = "full"
    LORA = "lora"
    QLORA = "qlora"


def engine_memory_fraction(engine: ServingEngine, tensor_parallel: int) -> tuple[float, bool]:
    """Share of accelerator memory the engine lets weights + KV cache use, as its defaults set it.

    Returns (fraction, of_free_memory): TensorRT-LLM applies its fraction to the memory left free
    after loading weights; the others to the whole device.
    * vLLM: `EngineArgs.gpu_memory_utilization = 0.90` (vllm/engine/arg_utils.py).
    * TensorRT-LLM: `KvCacheConfig.free_gpu_memory_fraction` default 0.9 (of free memory; the
      Triton backend templates ship `kv_cache_free_gpu_mem_fraction: 0.90`).
    * SGLang: `ServerArgs.mem_fraction_static` defaults 0.88 / 0.87 / 0.85 / 0.81 for tp 1 / >=2 /
      >=4 / >=8 (sglang/srt/server_args.py).
    * TGI: `--cuda-memory-fraction` default "1.0" (text-generation-launcher, launcher/src/main.rs).
    * llama.cpp: allocates what the model and context need; no reserved fraction.
    """
    if engine == ServingEngine.VLLM:
        return 0.90, False
    if engine == ServingEngine.TENSORRT_LLM:
        return 0.90, True
    if engine == ServingEngine.SGLANG:
        if tensor_parallel >= 8:
            return 0.81, False
        if tensor_parallel >= 4:
            return 0.85, False
        if tensor_parallel >= 2:
            return 0.87, False
        return 0.88, False
    return 1.0, False


def _require(condition: bool, field: str, reason: str) -> None:
    if not condition:
        raise InvalidSpec(field, reason)


@dataclass(frozen=True, slots=True)
class SpeculativeDecoding:
    """Draft-and-verify decoding (Leviathan et al. 2023, arXiv:2211.17192).

    The draft proposes `draft_tokens` tokens per step; each is accepted with probability
    `acceptance_rate` (the paper's alpha). Expected tokens per target pass:
    (1 - alpha^(gamma+1)) / (1 - alpha)  (paper, eq. 1).
    """

    draft_model: ModelArchitecture
    draft_tokens: int
    acceptance_rate: float

    def __post_init__(self) -> None:
        _require(self.draft_tokens >= 1, "speculative.draft_tokens", "must be at least 1")
        _require(
            0 <= self.acceptance_rate < 1,
            "speculative.acceptance_rate",
            f"must be in [0, 1), got {self.acceptance_rate}",
        )


@dataclass(frozen=True, slots=True)
class CpuOffload:
    """llama.cpp-style partial offload: layers that do not fit on the GPU stay in host RAM.

    The engine has no default host bandwidth: dual-channel DDR5 and 12-channel server memory differ
    by ~6x, so the caller must say what the machine has. `gpu_layers=None` puts as many layers on
    the GPU as fit.
    """

    host_memory_bandwidth_gb_s: float
    gpu_layers: int | None = None

    def __post_init__(self) -> None:
        _require(
            math.isfinite(self.host_memory_bandwidth_gb_s) and self.host_memory_bandwidth_gb_s > 0,
            "cpu_offload.host_memory_bandwidth_gb_s",
            "must be a positive number",
        )
        if self.gpu_layers is not None:
            _require(self.gpu_layers >= 0, "cpu_offload.gpu_layers", "must not be negative")


@dataclass(frozen=True, slots=True)
class InferenceConfig:
    """An inference deployment: N accelerators, a parallel layout, precisions and a workload shape.

    `accelerator_count` = replicas x tensor_parallel x pipeline_parallel. `tensor_parallel=None`
    means "all accelerators in one tensor-parallel group". `concurrency` is the number of
    sequences in flight across all replicas.
    """

    accelerator_count: int = 1
    weight_precision: Precision = Precision.BF16
    kv_cache_precision: Precision = Precision.BF16
    engine: ServingEngine = ServingEngine.VLLM
    input_tokens: int = 1024
    output_tokens: int = 256
    concurrency: int = 1
    tensor_parallel: int | None = None
    pipeline_parallel: int = 1
    ttft_target_ms: float | None = None
    tpot_target_ms: float | None = None
    speculative: SpeculativeDecoding | None = None
    cpu_offload: CpuOffload | None = None

    def __post_init__(self) -> None:
        _require(self.accelerator_count >= 1, "accelerator_count", "must be at least 1")
        _require(self.input_tokens >= 1, "input_tokens", f"must be at least 1, got {self.input_tokens}")
        _require(self.output_tokens >= 1, "output_tokens", f"must be at least 1, got {self.output_tokens}")
        _require(self.concurrency >= 1, "concurrency", f"must be at least 1, got {self.concurrency}")
        _require(self.pipeline_parallel >= 1, "pipeline_parallel", "must be at least 1")
        _require(
            self.tensor_parallel is None or self.tensor_parallel >= 1,
            "tensor_parallel",
            "must be at least 1",
        )
        _require(
            self.accelerator_count % self.group_size == 0,
            "accelerator_count",
            f"{self.accelerator_count} accelerators cannot be split into groups of "
            f"tensor_parallel x pipeline_parallel = {self.group_size}",
        )
        _require(
            self.kv_cache_precision in KV_CACHE_PRECISIONS,
            "kv_cache_precision",
            f"{self.kv_cache_precision.value!r} is not a KV-cache precision",
        )
        for field in ("ttft_target_ms", "tpot_target_ms"):
            target = getattr(self, field)
            _require(target is None or target > 0, field, "must be positive")
        _require(
            self.cpu_offload is None or self.accelerator_count == 1,
            "cpu_offload",
            "CPU offload is modelled for a single accelerator",
        )

    @property
    def tp(self) -> int:
        """Tensor-parallel degree; by default every accelerator of a pipeline stage."""
        if self.tensor_parallel is None:
            return max(self.accelerator_count // self.pipeline_parallel, 1)
        return self.tensor_parallel

    @property
    def group_size(self) -> int:
        """Accelerators in one model replica: tensor_parallel x pipeline_parallel."""
        return self.tp * self.pipeline_parallel

    @property
    def replicas(self) -> int:
        return self.accelerator_count // self.group_size

    @property
    def concurrency_per_replica(self) -> int:
        return math.ceil(self.concurrency / self.replicas)


@dataclass(frozen=True, slots=True)
class TrainingConfig:
    """A training or fine-tuning job.

    `tokens` is the total tokens processed (dataset tokens x epochs). `precision` is the compute
    precision (bf16/fp16 mixed precision, fp8, or fp32). Data parallelism with ZeRO stage
    `zero_stage` spans all accelerators; `tensor_parallel` shards layers within a node;
    `pipeline_parallel` splits the layers into that many stages (1F1B schedule), so data
    parallelism spans accelerator_count / (tensor_parallel x pipeline_parallel) replicas.
    `internode_bandwidth_gb_s` is per accelerator; None means the setting of the calibration
    rows (see `training.REFERENCE_INTERNODE_GB_S`).
    """

    accelerator_count: int = 8
    method: TrainingMethod = TrainingMethod.FULL
    precision: Precision = Precision.BF16
    tokens: float = 1e9
    sequence_length: int = 2048
    micro_batch_size: int = 1
    zero_stage: int = 3
    activation_checkpointing: bool = False
    lora_rank: int = 16
    tensor_parallel: int = 1
    pipeline_parallel: int = 1
    accelerators_per_node: int = 8
    internode_bandwidth_gb_s: float | None = None

    def __post_init__(self) -> None:
        _require(self.accelerator_count >= 1, "accelerator_count", "must be at least 1")
        _require(
            math.isfinite(self.tokens) and self.tokens > 0, "tokens", f"must be positive, got {self.tokens}"
        )
        _require(self.sequence_length >= 1, "sequence_length", "must be at least 1")
        _require(self.micro_batch_size >= 1, "micro_batch_size", "must be at least 1")
        _require(
            self.zero_stage in (0, 1, 2, 3), "zero_stage", f"must be 0, 1, 2 or 3, got {self.zero_stage}"
        )
        _require(self.lora_rank >= 1, "lora_rank", "must be at least 1")
        _require(self.tensor_parallel >= 1, "tensor_parallel", "must be at least 1")
        _require(
            self.accelerator_count % self.tensor_parallel == 0,
            "tensor_parallel",
            f"{self.tensor_parallel} does not divide {self.accelerator_count} accelerators",
        )
        _require(self.pipeline_parallel >= 1, "pipeline_parallel", "must be at least 1")
        _require(
            self.accelerator_count % (self.tensor_parallel * self.pipeline_parallel) == 0,
            "pipeline_parallel",
            f"tensor x pipeline degree {self.tensor_parallel * self.pipeline_parallel} does not divide "
            f"{self.accelerator_count} accelerators",
        )
        _require(self.accelerators_per_node >= 1, "accelerators_per_node", "must be at least 1")
        _require(
            self.precision in (Precision.BF16, Precision.FP16, Precision.FP8, Precision.FP32),
            "precision",
            f"training computes in bf16, fp16, fp8 or fp32, not {self.precision.value!r}",
        )
        if self.internode_bandwidth_gb_s is not None:
            _require(self.internode_bandwidth_gb_s > 0, "internode_bandwidth_gb_s", "must be positive")

    @property
    def data_parallel(self) -> int:
        return self.accelerator_count // (self.tensor_parallel * self.pipeline_parallel)

    @property
    def nodes(self) -> int:
        return math.ceil(self.accelerator_count / self.accelerators_per_node)
