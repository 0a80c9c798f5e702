"""Numeric formats: how many bits a stored weight or cache element takes, and what the maths runs in.

Two kinds of format live here:

* **uniform** formats store every quantised weight the same way; their bits per weight include the
  per-group scale (and zero-point) overhead;
* **GGUF mixtures** (llama.cpp `Q4_K_M`, `Q5_K_M`, ...) store different tensors at different types.
  Their size depends on the model's tensor shapes, so `memory.weights_bytes` resolves them with
  `gguf_tensor_type`, which mirrors llama.cpp's rule.

Sources of the figures
----------------------
* GGUF block sizes: ggml-org/llama.cpp `ggml/src/ggml-common.h` (`static_assert(sizeof(block_q4_0)
  == 18)` ...): Q4_0 = 18 B / 32 weights, Q4_1 = 20 B / 32, Q5_0 = 22 B / 32, Q8_0 = 34 B / 32,
  Q4_K = 144 B / 256, Q5_K = 176 B / 256, Q6_K = 210 B / 256 ("6.5625 bits per weight").
* GGUF mixtures: ggml-org/llama.cpp `src/llama-quant.cpp`, `llama_tensor_get_type_impl` and
  `use_more_bits` (read at commit 007dbbf). Checked against calibration rows mem016 (LLaMA-7B
  Q5_K_M 4.78 GB), mem018 (Q4_1 4.24 GB) and mem028 (Llama-3-70B Q4_K_M 42.52 GB).
* GPTQ: AutoGPTQ `QuantLinear` buffers: 4-bit `qweight`, per group of `group_size` input rows one
  fp16 `scales` and one 4-bit packed `qzeros` entry per output column -> (16 + 4) / group_size extra
  bits per weight; embeddings and the LM head stay 16-bit. Checked against rows mem033/mem035/
  mem036/mem041 (Llama-2-70B GPTQ no-group / g64 / g32).
* AWQ uses the same packing with group size 128 (the AutoAWQ default, `q_group_size: 128`).
* NF4 (bitsandbytes, QLoRA): 4 bits + double-quantised block constants of 8/64 + 32/(64*256) =
  0.127 bits per parameter (Dettmers et al. 2023, QLoRA, arXiv:2305.14314 §3 "Double Quantization").
* NVFP4: E2M1 4-bit values with one FP8 (E4M3) scale per 16 values, i.e. 4 + 8/16 = 4.5 bits
  (Intel Neural Compressor "NVFP4 Quantization" format table; NVIDIA NeMo AutoModel nvfp4 docs:
  "0.5625 bytes per parameter").
* FP8 and INT8 weights: 8 bits; their per-tensor or per-channel scales are < 0.01 bit per weight
  and are ignored. DeepSeek-V3's FP8 release uses 128x128 block scales in fp32 (32/16384 = 0.002 bit).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from wheretorun.engine.errors import InvalidSpec

__all__ = [
    "ComputeDtype",
    "GgmlType",
    "KV_CACHE_PRECISIONS",
    "PRECISION_GROUPS",
    "Precision",
    "PrecisionSupport",
    "UniformFormat",
    "bits_per_weight",
    "compute_dtype",
    "count_more_bits_layers",
    "gguf_tensor_type",
    "is_gguf_mixture",
    "kv_bytes_per_element",
    "parse_precision",
    "parse_precision_list",
    "uniform_format",
]


class Precision(StrEnum):
    """Weight (or KV-cache) storage precision. Values are the strings the API accepts."""

    FP32 = "fp32"
    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"
    INT8 = "int8"
    INT4 = "int4"  # generic weight-only 4-bit, group-128 scales (same packing as AWQ)
    FP4 = "fp4"  # NVIDIA NVFP4
    GPTQ_INT4 = "gptq-int4"  # group size 128, AutoGPTQ's default
    GPTQ_INT4_G64 = "gptq-int4-g64"
    GPTQ_INT4_G32 = "gptq-int4-g32"
    GPTQ_INT4_NO_GROUP = "gptq-int4-nogroup"
    AWQ_INT4 = "awq-int4"
    NF4 = "nf4"
    GGUF_F16 = "gguf-f16"
    GGUF_Q8_0 = "gguf-q8_0"
    GGUF_Q6_K = "gguf-q6_k"
    GGUF_Q5_K_M = "gguf-q5_k_m"
    GGUF_Q4_K_M = "gguf-q4_k_m"
    GGUF_Q4_1 = "gguf-q4_1"
    GGUF_Q4_0 = "gguf-q4_0"


class ComputeDtype(StrEnum):
    """The arithmetic the matrix multiplies run in; selects the accelerator's peak."""

    FP32 = "fp32"
    BF16 = "bf16"  # also FP16: the spec tables give one dense 16-bit tensor figure
    FP8 = "fp8"
    INT8 = "int8"
    FP4 = "fp4"


class GgmlType(StrEnum):
    """ggml tensor storage types used by the GGUF mixtures below."""

    F16 = "f16"
    Q8_0 = "q8_0"
    Q6_K = "q6_k"
    Q5_K = "q5_k"
    Q4_K = "q4_k"
    Q4_1 = "q4_1"
    Q4_0 = "q4_0"


# bytes per block / weights per block, from ggml-common.h (see module docstring).
_GGML_BITS_PER_WEIGHT: dict[GgmlType, float] = {
    GgmlType.F16: 16.0,
    GgmlType.Q8_0: 34 * 8 / 32,  # 8.5
    GgmlType.Q6_K: 210 * 8 / 256,  # 6.5625
    GgmlType.Q5_K: 176 * 8 / 256,  # 5.5
    GgmlType.Q4_K: 144 * 8 / 256,  # 4.5
    GgmlType.Q4_1: 20 * 8 / 32,  # 5.0
    GgmlType.Q4_0: 18 * 8 / 32,  # 4.5
}


@dataclass(frozen=True, slots=True)
class UniformFormat:
    """A format that stores every quantised matrix the same way.

    `bits_per_weight` includes scale/zero overhead. `embeddings_16bit` says whether the token
    embedding and LM head are left in 16-bit (GPTQ, AWQ, bitsandbytes do; FP8 checkpoints of
    Llama keep the LM head in 16-bit too, but it is < 2% of a 70B model and is ignored).
    """

    bits_per_weight: float
    embeddings_16bit: bool = False


def _group_quant_bits(bits: int, group_size: int) -> float:
    """Bits per weight of GPTQ/AWQ packing: `bits` + one fp16 scale and one `bits`-bit zero per group."""
    return bits + (16 + bits) / group_size


_UNIFORM: dict[Precision, UniformFormat] = {
    Precision.FP32: UniformFormat(32.0),
    Precision.BF16: UniformFormat(16.0),
    Precision.FP16: UniformFormat(16.0),
    Precision.FP8: UniformFormat(8.0),
    Precision.INT8: UniformFormat(8.0),
    Precision.INT4: UniformFormat(_group_quant_bits(4, 128), embeddings_16bit=True),
    Precision.FP4: UniformFormat(4 + 8 / 16),
    Precision.GPTQ_INT4: UniformFormat(_group_quant_bits(4, 128), embeddings_16bit=True),
    Precision.GPTQ_INT4_G64: UniformFormat(_group_quant_bits(4, 64), embeddings_16bit=True),
    Precision.GPTQ_INT4_G32: UniformFormat(_group_quant_bits(4, 32), embeddings_16bit=True),
    # No grouping: one scale/zero per output column over the whole input dimension; < 0.01 bit.
    Precision.GPTQ_INT4_NO_GROUP: UniformFormat(4.0, embeddings_16bit=True),
    Precision.AWQ_INT4: UniformFormat(_group_quant_bits(4, 128), embeddings_16bit=True),
    Precision.NF4: UniformFormat(4 + 8 / 64 + 32 / (64 * 256), embeddings_16bit=True),
    Precision.GGUF_F16: UniformFormat(16.0),
}

# The default type of each GGUF mixture, and the type its "use more bits" tensors are raised to.
_GGUF_BASE: dict[Precision, GgmlType] = {
    Precision.GGUF_Q8_0: GgmlType.Q8_0,
    Precision.GGUF_Q6_K: GgmlType.Q6_K,
    Precision.GGUF_Q5_K_M: GgmlType.Q5_K,
    Precision.GGUF_Q4_K_M: GgmlType.Q4_K,
    Precision.GGUF_Q4_1: GgmlType.Q4_1,
    Precision.GGUF_Q4_0: GgmlType.Q4_0,
}

KV_CACHE_PRECISIONS: frozenset[Precision] = frozenset(
    {Precision.FP32, Precision.BF16, Precision.FP16, Precision.FP8, Precision.INT8}
)


def parse_precision(value: str, field: str) -> Precision:
    """Turn an API string into a Precision, or raise InvalidSpec naming `field`."""
    try:
        return Precision(value.strip().lower())
    except ValueError:
        known = ", ".join(p.value for p in Precision)
        raise InvalidSpec(field, f"unknown precision {value!r}; known: {known}") from None


def is_gguf_mixture(precision: Precision) -> bool:
    return precision in _GGUF_BASE


def uniform_format(precision: Precision) -> UniformFormat | None:
    """The uniform format of `precision`, or None for a GGUF mixture."""
    return _UNIFORM.get(precision)


def bits_per_weight(ggml_type: GgmlType) -> float:
    return _GGML_BITS_PER_WEIGHT[ggml_type]


def _use_more_bits(layer: int, layers: int) -> bool:
    """llama.cpp's choice of layers that get the larger type in *_M mixtures (llama-quant.cpp)."""
    return layer < layers // 8 or layer >= 7 * layers // 8 or (layer - layers // 8) % 3 == 2


def count_more_bits_layers(layers: int) -> int:
    """How many of `layers` layers llama.cpp's `use_more_bits` selects (about half)."""
    return sum(_use_more_bits(layer, layers) for layer in range(layers))


def gguf_tensor_type(
    precision: Precision,
    tensor: str,
    *,
    more_bits_layer: bool,
    experts: int = 1,
    is_70b_class: bool = False,
) -> GgmlType:
    """The ggml type llama.cpp picks for one tensor of a GGUF mixture.

    `tensor` is one of "output", "token_embd", "attn_q", "attn_k", "attn_v", "attn_output",
    "ffn_gate", "ffn_up", "ffn_down"; `more_bits_layer` says whether the tensor's layer is one
    `use_more_bits` selects. Mirrors `llama_tensor_get_type_impl` for the mixtures in `Precision`
    (non-Falcon architectures, no importance matrix). `is_70b_class` is llama.cpp's LLM_TYPE_70B
    (80-layer Llama/Qwen2 models).
    """
    base = _GGUF_BASE[precision]
    if tensor == "output":
        return base if base == GgmlType.Q8_0 else GgmlType.Q6_K
    mixture_raises = precision in (Precision.GGUF_Q4_K_M, Precision.GGUF_Q5_K_M)
    if tensor == "attn_v":
        chosen = GgmlType.Q6_K if mixture_raises and more_bits_layer else base
        if is_70b_class and chosen == GgmlType.Q4_K:
            chosen = GgmlType.Q5_K  # llama-quant.cpp: 70B "8 heads sharing the same attn_v weights"
        return GgmlType.Q8_0 if experts == 8 else chosen
    if tensor == "attn_k" and experts == 8:
        return GgmlType.Q8_0
    if tensor == "attn_output" and experts == 8 and precision == Precision.GGUF_Q4_K_M:
        return GgmlType.Q5_K
    if tensor == "ffn_down" and mixture_raises and more_bits_layer:
        return GgmlType.Q6_K
    return base


def kv_bytes_per_element(precision: Precision, field: str = "kv_cache_precision") -> float:
    """Bytes per cached key/value element. Only plain dense formats are valid for a KV cache."""
    if precision not in KV_CACHE_PRECISIONS:
        allowed = ", ".join(sorted(p.value for p in KV_CACHE_PRECISIONS))
        raise InvalidSpec(field, f"{precision.value!r} is not a KV-cache precision; use one of {allowed}")
    fmt = _UNIFORM[precision]
    return fmt.bits_per_weight / 8


def compute_dtype(precision: Precision) -> ComputeDtype:
    """The arithmetic the weights are multiplied in.

    Weight-only formats (GPTQ, AWQ, NF4, GGUF, generic int4) dequantise to 16-bit and multiply in
    16-bit. FP8 and FP4 checkpoints run W8A8 / W4A4 on hardware that has those units; INT8 is
    treated as W8A8 (SmoothQuant-style). Accelerators without the unit fall back to a slower dtype
    (see `AcceleratorSpec.peak_tflops`).
    """
    if precision == Precision.FP32:
        return ComputeDtype.FP32
    if precision == Precision.FP8:
        return ComputeDtype.FP8
    if precision == Precision.FP4:
        return ComputeDtype.FP4
    if precision == Precision.INT8:
        return ComputeDtype.INT8
    return ComputeDtype.BF16


# Names that stand for a family of formats in precision-support tables.
PRECISION_GROUPS: dict[str, frozenset[Precision]] = {
    "gptq": frozenset(
        {Precision.GPTQ_INT4, Precision.GPTQ_INT4_G64, Precision.GPTQ_INT4_G32, Precision.GPTQ_INT4_NO_GROUP}
    ),
    "gguf": frozenset(p for p in Precision if p.value.startswith("gguf-")),
}

# When an accelerator cannot run a format, the one that stores the same bytes and that it may run
# instead: fp16 for bf16 (Turing, Volta: same 2 bytes, same tensor rate), GPTQ for AWQ (Volta: both
# 4 bits with group-128 scales, `_group_quant_bits`).
_SAME_BYTES: dict[Precision, Precision] = {
    Precision.BF16: Precision.FP16,
    Precision.AWQ_INT4: Precision.GPTQ_INT4,
}


def parse_precision_list(text: str, field: str) -> frozenset[Precision]:
    """`fp16;bf16;gptq` -> the precisions named (a group name such as `gptq` or `gguf` stands for
    all its formats); an empty string is the empty set. Raises InvalidSpec naming `field`."""
    chosen: set[Precision] = set()
    for name in (part.strip().lower() for part in text.split(";")):
        if not name:
            continue
        chosen |= PRECISION_GROUPS.get(name) or {parse_precision(name, field)}
    return frozenset(chosen)


@dataclass(frozen=True, slots=True)
class PrecisionSupport:
    """What an accelerator's architecture can run, as its catalog row says.

    `native`: the arithmetic it has units for (a compute precision of training or of W8A8 / W4A4
    serving). `served`: the weight precisions the serving engines run on it (vLLM's supported-hardware
    table), weight-only formats included (GPTQ, AWQ, GGUF, fp8 via Marlin on Ampere).
    """

    family: str
    native: frozenset[Precision]
    served: frozenset[Precision]
    source: str = ""

    def serves(self, precision: Precision) -> bool:
        return precision in self.served

    def computes(self, precision: Precision) -> bool:
        return precision in self.native

    def served_instead(self, precision: Precision) -> Precision | None:
        """`precision` if it is served, else the same-bytes format that is (bf16 -> fp16,
        awq-int4 -> gptq-int4), else None."""
        if self.serves(precision):
            return precision
        alternative = _SAME_BYTES.get(precision)
        return alternative if alternative is not None and self.serves(alternative) else None

    def trained_instead(self, precision: Precision) -> Precision | None:
        """The mixed-precision type a training run in `precision` uses here: itself if the chip has
        the units, fp16 in place of bf16 (Volta, Turing), else None."""
        if self.computes(precision):
            return precision
        alternative = _SAME_BYTES.get(precision)
        return alternative if alternative is not None and self.computes(alternative) else None

    def describe(self, precisions: frozenset[Precision]) -> str:
        """`fp16, gptq (all 4 formats), int8`: a group served whole is named once."""
        names = []
        rest = set(precisions)
        for group, members in PRECISION_GROUPS.items():
            if members <= rest:
                names.append(f"{group} (all {len(members)} formats)")
                rest -= members
        names += [p.value for p in rest]
        return ", ".join(sorted(names)) if names else "none"
