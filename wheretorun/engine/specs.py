"""Immutable descriptions of a model architecture and an accelerator.

Both validate themselves on construction and raise `InvalidSpec(field, reason)` for inputs that
cannot describe real hardware or a real network. Units follow DESIGN.md: GB = 1e9 bytes, GB/s,
TFLOPS = 1e12 FLOP/s (dense), W. Parameter counts are in billions (`_b`), as model cards print them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from wheretorun.engine.errors import InvalidSpec
from wheretorun.engine.precision import ComputeDtype, Precision, PrecisionSupport, compute_dtype

__all__ = [
    "AcceleratorSpec",
    "AttentionKind",
    "MemoryKind",
    "ModelArchitecture",
]


class AttentionKind(StrEnum):
    """How keys and values are cached. GQA and MQA are STANDARD with kv_heads < attention_heads."""

    STANDARD = "standard"
    MLA = "mla"  # multi-head latent attention (DeepSeek-V2/V3): one compressed latent per layer


class MemoryKind(StrEnum):
    """Memory technology; decode efficiency is calibrated per serving engine and memory kind."""

    HBM = "hbm"
    GDDR = "gddr"
    UNIFIED = "unified"  # SoC shared memory (Apple M-series, Jetson)


def _require(condition: bool, field: str, reason: str) -> None:
    if not condition:
        raise InvalidSpec(field, reason)


def _require_positive(value: float, field: str) -> None:
    _require(math.isfinite(value) and value > 0, field, f"must be a positive number, got {value}")


@dataclass(frozen=True, slots=True)
class ModelArchitecture:
    """Architecture facts of a decoder-only transformer (dense or mixture-of-experts).

    `total_params_b` is what memory holds; `active_params_b` (MoE) is what one token's forward pass
    multiplies. Either may be left out when the shapes determine it (standard attention with a
    known `intermediate_size`); model cards round ("70B" for 70.55B), the shapes do not. Expert
    sizes are derived from the two counts, so a model card's "46.7B total, 12.9B active, 8 experts,
    top-2" is enough. `kv_elements_per_layer` overrides the cached elements per
    token per layer (MLA caches kv_lora_rank + rope dims = 576 for DeepSeek-V3 instead of
    2 x kv_heads x head_dim).
    """

    name: str
    layers: int
    hidden_size: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    vocab_size: int
    max_context: int
    intermediate_size: int | None = None
    total_params_b: float | None = None
    active_params_b: float | None = None
    experts: int = 1
    experts_per_token: int = 1
    gated_mlp: bool = True  # SwiGLU-style gate+up+down (Llama, Mistral, Qwen); False = up+down (GPT, MPT)
    tied_embeddings: bool = False
    attention: AttentionKind = AttentionKind.STANDARD
    kv_elements_per_layer: int | None = None
    sliding_window: int | None = None
    sliding_window_layers: int = 0

    def __post_init__(self) -> None:
        for field in ("layers", "hidden_size", "attention_heads", "kv_heads", "head_dim", "vocab_size"):
            _require(getattr(self, field) >= 1, field, f"must be at least 1, got {getattr(self, field)}")
        _require(self.max_context >= 1, "max_context", f"must be at least 1, got {self.max_context}")
        _require(
            self.kv_heads <= self.attention_heads,
            "kv_heads",
            f"{self.kv_heads} KV heads exceed {self.attention_heads} attention heads",
        )
        _require(
            self.attention_heads % self.kv_heads == 0,
            "kv_heads",
            f"{self.attention_heads} attention heads are not divisible by {self.kv_heads} KV heads",
        )
        if self.intermediate_size is not None:
            _require(self.intermediate_size >= 1, "intermediate_size", "must be at least 1")
        _require(self.experts >= 1, "experts", f"must be at least 1, got {self.experts}")
        self._fill_derived_counts()
        self._validate_experts()
        self._validate_attention_extras()

    def _fill_derived_counts(self) -> None:
        """Derive missing parameter counts from the shapes (frozen, hence object.__setattr__)."""
        if self.total_params_b is None:
            object.__setattr__(self, "total_params_b", self._count_params_b(self.experts))
        _require_positive(self.total_params, "total_params_b")
        if self.active_params_b is None and self.experts > self.experts_per_token and self._derivable:
            object.__setattr__(self, "active_params_b", self._count_params_b(self.experts_per_token))

    @property
    def _derivable(self) -> bool:
        return self.intermediate_size is not None and self.attention == AttentionKind.STANDARD

    def _count_params_b(self, experts_counted: int) -> float:
        """Parameters implied by the shapes: attention, MLP (x experts), router, norms, embeddings.

        Standard decoder block: Q and O are hidden x heads*head_dim, K and V hidden x
        kv_heads*head_dim; an MLP has 3 (gated) or 2 matrices of hidden x intermediate; two
        RMS/LayerNorm weight vectors per layer plus a final one. Biases are not counted (Qwen2's
        QKV bias is < 0.01% of the model).
        """
        _require(
            self._derivable,
            "total_params_b",
            "required unless intermediate_size is given and attention is standard",
        )
        assert self.intermediate_size is not None
        kv_width = self.kv_heads * self.head_dim
        attention = 2 * self.hidden_size * self.attention_width + 2 * self.hidden_size * kv_width
        mlp = (3 if self.gated_mlp else 2) * self.hidden_size * self.intermediate_size
        router = self.hidden_size * self.experts if self.experts > 1 else 0
        norms = 2 * self.hidden_size
        per_layer = attention + experts_counted * mlp + router + norms
        embeddings = self.vocab_size * self.hidden_size * (1 if self.tied_embeddings else 2)
        return (self.layers * per_layer + embeddings + self.hidden_size) / 1e9

    def _validate_experts(self) -> None:
        _require(
            1 <= self.experts_per_token <= self.experts,
            "experts_per_token",
            f"must be between 1 and experts ({self.experts}), got {self.experts_per_token}",
        )
        if self.active_params_b is not None:
            _require_positive(self.active_params_b, "active_params_b")
            _require(
                self.active_params_b * 1e9 <= self.total_params,
                "active_params_b",
                f"{self.active_params_b}B active exceeds {self.total_params_b}B total",
            )
        if self.experts > self.experts_per_token:
            _require(
                self.active_params_b is not None,
                "active_params_b",
                "a mixture-of-experts model needs its active parameter count",
            )

    def _validate_attention_extras(self) -> None:
        if self.kv_elements_per_layer is not None:
            _require(self.kv_elements_per_layer >= 1, "kv_elements_per_layer", "must be at least 1")
        _require(
            self.attention != AttentionKind.MLA or self.kv_elements_per_layer is not None,
            "kv_elements_per_layer",
            "MLA caches one latent per layer, not per-head keys and values: give its cached elements "
            "per token per layer (576 for DeepSeek-V3)",
        )
        _require(
            0 <= self.sliding_window_layers <= self.layers,
            "sliding_window_layers",
            f"must be between 0 and layers ({self.layers}), got {self.sliding_window_layers}",
        )
        if self.sliding_window_layers:
            _require(
                self.sliding_window is not None and self.sliding_window >= 1,
                "sliding_window",
                "sliding-window layers need a window of at least 1 token",
            )

    # ---- derived sizes -------------------------------------------------------------------------

    @property
    def total_params(self) -> float:
        assert self.total_params_b is not None  # filled in __post_init__
        return self.total_params_b * 1e9

    @property
    def active_params(self) -> float:
        """Parameters one token multiplies; equal to the total for a dense model."""
        if self.active_params_b is None:
            return self.total_params
        return self.active_params_b * 1e9

    @property
    def is_moe(self) -> bool:
        return self.experts > self.experts_per_token

    @property
    def params_per_expert(self) -> float:
        """All layers' parameters of one routed expert: (total - active) / (experts - top_k)."""
        if not self.is_moe:
            return 0.0
        return (self.total_params - self.active_params) / (self.experts - self.experts_per_token)

    @property
    def shared_params(self) -> float:
        """Parameters every token reads: attention, embeddings, shared experts, dense layers."""
        return self.total_params - self.experts * self.params_per_expert

    @property
    def embedding_params(self) -> float:
        """Input embedding plus (if untied) the LM head: vocab x hidden each."""
        copies = 1 if self.tied_embeddings else 2
        return copies * self.vocab_size * self.hidden_size

    @property
    def matmul_params_per_token(self) -> float:
        """Active parameters that take part in a matrix multiply.

        The input-embedding lookup is a gather, not a matmul, so an untied embedding table is not
        charged 2 FLOPs per parameter; a tied one is, because it doubles as the LM head.
        """
        lookup_only = 0 if self.tied_embeddings else self.vocab_size * self.hidden_size
        return max(self.active_params - lookup_only, 0.0)

    @property
    def attention_width(self) -> int:
        """heads x head_dim: width of Q and of the attention output (not always = hidden)."""
        return self.attention_heads * self.head_dim

    @property
    def cached_elements_per_layer(self) -> int:
        """Elements cached per token per layer: 2 x kv_heads x head_dim unless overridden (MLA)."""
        if self.kv_elements_per_layer is not None:
            return self.kv_elements_per_layer
        return 2 * self.kv_heads * self.head_dim


@dataclass(frozen=True, slots=True)
class AcceleratorSpec:
    """One accelerator (GPU, TPU chip or SoC) as its spec sheet describes it.

    Peak compute is dense (no sparsity); `bf16_tflops` is the 16-bit tensor rate with FP32
    accumulation (fp16 on chips without bf16, see `precision_support`). A missing figure is None,
    never 0: an estimate that needs it reports that it cannot be computed.
    `usable_memory_fraction` is the share of `memory_gb` the accelerator lets a model use (Apple
    Silicon wires ~75% of unified memory to the GPU by default, calibration gpus.csv note on the
    M2 Ultra row).
    """

    name: str
    memory_gb: float
    memory_bandwidth_gb_s: float
    family: str
    memory_kind: MemoryKind
    bf16_tflops: float | None = None
    fp16_accumulate_tflops: float | None = None  # FP16 tensor rate with FP16 accumulation, where higher
    fp8_tflops: float | None = None
    fp4_tflops: float | None = None
    int8_tops: float | None = None
    fp32_tflops: float | None = None
    tdp_w: float | None = None
    interconnect_gb_s: float | None = None  # unidirectional, per accelerator, within a node
    usable_memory_fraction: float = 1.0
    precision_support: PrecisionSupport | None = None  # None: not stated, so not checked

    def __post_init__(self) -> None:
        _require_positive(self.memory_gb, "memory_gb")
        _require_positive(self.memory_bandwidth_gb_s, "memory_bandwidth_gb_s")
        for field in (
            "bf16_tflops",
            "fp16_accumulate_tflops",
            "fp8_tflops",
            "fp4_tflops",
            "int8_tops",
            "fp32_tflops",
            "tdp_w",
        ):
            value = getattr(self, field)
            if value is not None:
                _require_positive(value, field)
        if self.interconnect_gb_s is not None:
            _require_positive(self.interconnect_gb_s, "interconnect_gb_s")
        _require(
            0 < self.usable_memory_fraction <= 1,
            "usable_memory_fraction",
            f"must be in (0, 1], got {self.usable_memory_fraction}",
        )

    @property
    def usable_memory_gb(self) -> float:
        return self.memory_gb * self.usable_memory_fraction

    def peak_tflops(self, dtype: ComputeDtype, fp16_accumulate: bool = False) -> float | None:
        """Dense peak for `dtype`, falling back to the next wider unit the chip has.

        FP4 falls back to FP8, FP8/INT8 to 16-bit, and 16-bit to FP32. Falling back only ever
        lowers the peak, so an estimate stays under the real roofline. `fp16_accumulate`: the
        16-bit matmuls accumulate in FP16 (llama.cpp, `config.accumulates_in_fp16`), which GeForce
        cards run at twice their FP32-accumulate rate (`fp16_accumulate_tflops`).
        """
        if fp16_accumulate and dtype == ComputeDtype.BF16 and self.fp16_accumulate_tflops is not None:
            return self.fp16_accumulate_tflops
        chains: dict[ComputeDtype, tuple[float | None, ...]] = {
            ComputeDtype.FP4: (self.fp4_tflops, self.fp8_tflops, self.bf16_tflops, self.fp32_tflops),
            ComputeDtype.FP8: (self.fp8_tflops, self.bf16_tflops, self.fp32_tflops),
            ComputeDtype.INT8: (self.int8_tops, self.bf16_tflops, self.fp32_tflops),
            ComputeDtype.BF16: (self.bf16_tflops, self.fp32_tflops),
            ComputeDtype.FP32: (self.fp32_tflops,),
        }
        return next((value for value in chains[dtype] if value is not None), None)

    # ---- what it can run ---------------------------------------------------------------------

    def serving_problem(self, precision: Precision) -> str | None:
        """Why this accelerator cannot serve `precision` weights, or None (also when unstated)."""
        support = self.precision_support
        if support is None or support.serves(precision):
            return None
        return (
            f"{self.name} ({support.family}) cannot serve {precision.value} weights; "
            f"its serving engines run {support.describe(support.served)}"
        )

    def training_problem(self, precision: Precision) -> str | None:
        """Why this accelerator cannot train in `precision`, or None (also when unstated)."""
        support = self.precision_support
        if support is None or support.computes(precision):
            return None
        return (
            f"{self.name} ({support.family}) has no {precision.value} arithmetic; "
            f"it computes in {support.describe(support.native)}"
        )

    def compute_peak_problem(self, precision: Precision) -> str | None:
        """None when a compute peak (after falling back, `peak_tflops`) exists for `precision`'s
        arithmetic; else why not: prefill and training time need it and are never guessed."""
        dtype = compute_dtype(precision)
        if self.peak_tflops(dtype) is not None:
            return None
        return (
            f"{self.name} publishes no {dtype.value} (or wider) compute peak, so prefill and "
            "training time cannot be estimated"
        )
